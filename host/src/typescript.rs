//! Reading a module's source on the host, with oxc's parser: the specifiers it imports (for
//! bundling its files), and for TypeScript the same text with its types blanked out.
//!
//! Types are stripped by replacing each type-only piece of text with spaces (line breaks kept),
//! as Node does for `.ts` files: every line and column of what runs is that of the `.ts`
//! source, so a syntax error, a stack line or an error location points into the `.ts` file
//! with no source map. TypeScript that needs code generated (an `enum`, a `namespace` with
//! values, a constructor's parameter properties, `import x = require(…)`, `export =`) is
//! refused with its position; write it as JavaScript (a `const` object for an enum).

use crate::{Error, GuestLocation};
use oxc_allocator::Allocator;
use oxc_ast::ast::*;
use oxc_ast_visit::{Visit, walk};
use oxc_parser::{ParseOptions, Parser};
use oxc_span::{GetSpan, SourceType, Span};

/// How much stack the host's parse of a module, and its walk over the parsed tree, may each
/// use. Both recurse once per level of nesting, so a source nested deep enough (20,000
/// parentheses in 40 KB) would overflow any fixed stack and abort the host: the parse stops
/// at this bound (`vendor/oxc_parser`, `ParseOptions::stack_limit`) and the walk skips what
/// lies deeper, and the module is `guest_syntax`, "nested too deeply". Debug builds spend
/// several times the stack per level, so they get more, to accept the same nesting.
pub(crate) const PARSE_STACK_LIMIT: usize = if cfg!(debug_assertions) {
    96 << 20
} else {
    16 << 20
};

/// The stack of the thread a module is read on: room for the parse's bound, with a margin for
/// the frames above it and between two of its checks. The pages are only touched as deep as a
/// module's nesting goes.
const SCAN_THREAD_STACK: usize = PARSE_STACK_LIMIT + (4 << 20);

/// An import a module makes with a string literal: `import … from "x"`, `export … from "x"`,
/// or `import("x")`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Import {
    pub specifier: String,
    /// Where it is, 1-based.
    pub line: u32,
    pub column: u32,
    /// A dynamic `import("x")`, which may be left to fail when the call runs.
    pub dynamic: bool,
    /// Whether a static import asks for JSON (`with { type: "json" }`).
    pub json: bool,
    /// Whether the module it is in does not parse: the guest reports that syntax error before
    /// it resolves any import, so the host does not refuse the import first.
    pub in_broken_module: bool,
}

impl Import {
    /// Whether the import may name nothing the host can bundle, and is left to the guest: a
    /// dynamic `import("x")` fails, catchably, when it runs; an import of a module that does
    /// not parse is never resolved.
    pub fn may_fail(&self) -> bool {
        self.dynamic || self.in_broken_module
    }
}

/// What the host read from a module.
#[derive(Debug)]
pub(crate) struct Scanned {
    /// The source to run: the text itself, or for TypeScript the text with its types blanked.
    pub source: String,
    pub imports: Vec<Import>,
    /// For a module that parses and exports nothing, the byte range of its last statement
    /// when that is an expression statement, and of the expression in it.
    pub last_expression: Option<(Span, Span)>,
}

/// `source` with the value of its last expression statement as its default export, when it
/// is a module that exports nothing (no `export` anywhere in its text) and ends with one:
/// `const r = await fetch(u); (await r.json()).items.length` runs as if it ended with
/// `export default ((await r.json()).items.length);`. Lines stay where they were.
pub(crate) fn with_last_expression(name: &str, source: &str) -> Option<String> {
    if source.contains("export") {
        return None;
    }
    let (statement, expression) = scan(name, source, false).ok()?.last_expression?;
    let text = |span: Span| &source[span.start as usize..span.end as usize];
    let head = &source[..statement.start as usize];
    let tail = &source[statement.end as usize..];
    Some(format!(
        "{head}export default ({});{tail}",
        text(expression)
    ))
}

/// Read `source` (TypeScript when `typescript`) as an ES module. A TypeScript module that does
/// not parse, or that needs code generated, is `guest_syntax` with the position in `source`;
/// JavaScript that oxc does not parse is returned as it is (with the imports oxc found), for
/// QuickJS to report.
///
/// The parse runs on a thread of its own with a stack of known size, so that its bound
/// ([`PARSE_STACK_LIMIT`]) holds whatever thread calls it (a server's worker, a test's).
pub(crate) fn scan(name: &str, source: &str, typescript: bool) -> Result<Scanned, Error> {
    std::thread::scope(|scope| {
        let reader = std::thread::Builder::new()
            .name("palisade-parse".to_owned())
            .stack_size(SCAN_THREAD_STACK)
            .spawn_scoped(scope, || scan_here(name, source, typescript))
            .map_err(|e| Error::Internal {
                detail: format!("cannot start a thread to parse `{name}`: {e}"),
            })?;
        reader
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// [`scan`], on the calling thread, which has [`SCAN_THREAD_STACK`] of stack.
fn scan_here(name: &str, source: &str, typescript: bool) -> Result<Scanned, Error> {
    let allocator = Allocator::default();
    let source_type = if typescript {
        SourceType::ts().with_module(true)
    } else {
        SourceType::mjs()
    };
    let options = ParseOptions {
        stack_limit: Some(PARSE_STACK_LIMIT),
        ..ParseOptions::default()
    };
    let parsed = Parser::new(&allocator, source, source_type)
        .with_options(options)
        .parse();
    let first_error = parsed.diagnostics.errors().next().map(|error| {
        let at = error.labels.first().map_or(0, |label| label.span().start);
        (at, error.message.to_string())
    });
    if parsed.nesting_too_deep {
        return Err(too_deep(name, source, first_error.map_or(0, |(at, _)| at)));
    }
    if typescript && let Some((at, message)) = first_error {
        return Err(syntax(name, source, at, &message));
    }
    let mut scan = Scan {
        source,
        typescript,
        blanks: Vec::new(),
        imports: Vec::new(),
        unsupported: None,
        stack: StackBound::here(PARSE_STACK_LIMIT),
        too_deep: None,
    };
    scan.visit_program(&parsed.program);
    if let Some(at) = scan.too_deep {
        return Err(too_deep(name, source, at));
    }
    if let Some((what, at)) = scan.unsupported {
        return Err(syntax(
            name,
            source,
            at,
            &format!(
                "TypeScript {what} needs code generated, which Palisade's type stripping does not \
                 do; write it as JavaScript"
            ),
        ));
    }
    let mut imports = scan.imports;
    if first_error.is_some() {
        for import in &mut imports {
            import.in_broken_module = true;
        }
    }
    let last_expression = first_error
        .is_none()
        .then(|| last_expression(&parsed.program))
        .flatten();
    let source = if typescript {
        blank(source, scan.blanks)
    } else {
        source.to_owned()
    };
    Ok(Scanned {
        source,
        imports,
        last_expression,
    })
}

/// The spans of `program`'s last statement and its expression, when it exports nothing and
/// ends with an expression statement.
fn last_expression(program: &Program<'_>) -> Option<(Span, Span)> {
    if program.body.iter().any(Statement::is_module_declaration) {
        return None;
    }
    match program.body.last()? {
        Statement::ExpressionStatement(statement) => {
            Some((statement.span, statement.expression.span()))
        }
        _ => None,
    }
}

/// Whether a module name is TypeScript, by its extension (`.ts`, `.mts`).
pub(crate) fn is_typescript(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    (lower.ends_with(".ts") && !lower.ends_with(".d.ts")) || lower.ends_with(".mts")
}

/// A module nested deeper than the host reads: `guest_syntax` at the place it stopped.
fn too_deep(name: &str, source: &str, at: u32) -> Error {
    syntax(
        name,
        source,
        at,
        "the source is nested too deeply for the host to read (its imports or its TypeScript); \
         flatten the nesting",
    )
}

/// How far below where it started a recursion may reach on the stack: the walk over a parsed
/// tree checks it at each level it could nest without end, and skips what lies deeper.
struct StackBound {
    base: usize,
    limit: usize,
}

impl StackBound {
    /// Count from the caller's frame.
    #[inline(always)]
    fn here(limit: usize) -> Self {
        Self {
            base: stack_position(),
            limit,
        }
    }

    #[inline(always)]
    fn exceeded(&self) -> bool {
        self.base.abs_diff(stack_position()) > self.limit
    }
}

/// The address of a local in the caller's frame: where the stack is now.
#[inline(always)]
fn stack_position() -> usize {
    let marker = 0u8;
    std::ptr::addr_of!(marker) as usize
}

fn syntax(name: &str, source: &str, at: u32, message: &str) -> Error {
    let (line, column) = position(source, at);
    Error::GuestSyntax {
        message: format!("{name}: {message}"),
        location: Some(GuestLocation { line, column }),
        stack: None,
    }
}

/// The 1-based line and column (in characters) of byte offset `at`.
pub(crate) fn position(source: &str, at: u32) -> (u32, u32) {
    let at = (at as usize).min(source.len());
    let before = source.get(..at).unwrap_or(source);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count() + 1;
    let column = before[line_start..].chars().count() + 1;
    (line as u32, column as u32)
}

/// `source` with each range in `blanks` replaced by spaces, one per character, keeping line
/// breaks, so that every other character stays at its line and column.
fn blank(source: &str, mut blanks: Vec<(u32, u32)>) -> String {
    blanks.sort_unstable();
    let mut out = String::with_capacity(source.len());
    let mut next = 0usize;
    for (start, end) in blanks {
        let (start, end) = ((start as usize).max(next), end as usize);
        if start >= end || end > source.len() {
            continue;
        }
        out.push_str(&source[next..start]);
        for c in source[start..end].chars() {
            out.push(match c {
                '\n' | '\r' | '\u{2028}' | '\u{2029}' => c,
                _ => ' ',
            });
        }
        next = end;
    }
    out.push_str(&source[next..]);
    out
}

struct Scan<'s> {
    source: &'s str,
    typescript: bool,
    /// Byte ranges to blank.
    blanks: Vec<(u32, u32)>,
    imports: Vec<Import>,
    /// The first construct that needs code generated, and where it starts.
    unsupported: Option<(&'static str, u32)>,
    /// The walk's bound on the stack.
    stack: StackBound,
    /// Where the walk first reached its bound, and skipped the rest of a subtree.
    too_deep: Option<u32>,
}

/// TypeScript's modifiers of class members, which JavaScript has not.
const TS_MODIFIERS: [&str; 6] = [
    "public",
    "private",
    "protected",
    "readonly",
    "override",
    "declare",
];

impl Scan<'_> {
    /// Whether the walk is as deep as its bound lets it go: then it records where, and the
    /// caller skips the subtree at `span`.
    fn too_deep(&mut self, span: Span) -> bool {
        if self.too_deep.is_some() || self.stack.exceeded() {
            self.too_deep.get_or_insert(span.start);
            return true;
        }
        false
    }

    fn blank(&mut self, span: Span) {
        self.blanks.push((span.start, span.end));
    }

    fn refuse(&mut self, what: &'static str, span: Span) {
        self.unsupported.get_or_insert((what, span.start));
    }

    fn import(
        &mut self,
        literal: &StringLiteral<'_>,
        dynamic: bool,
        with: Option<&WithClause<'_>>,
    ) {
        let (line, column) = position(self.source, literal.span.start);
        let json = with.is_some_and(|w| {
            w.with_entries.iter().any(|entry| {
                let key = match &entry.key {
                    ImportAttributeKey::Identifier(name) => name.name.as_str(),
                    ImportAttributeKey::StringLiteral(name) => name.value.as_str(),
                };
                key == "type" && entry.value.value == "json"
            })
        });
        self.imports.push(Import {
            specifier: literal.value.to_string(),
            line,
            column,
            dynamic,
            json,
            in_broken_module: false,
        });
    }

    /// Blank `span`, and the comma after it (a type-only specifier or `this` parameter).
    fn blank_with_comma(&mut self, span: Span) {
        let rest = &self.source[span.end as usize..];
        let trimmed = rest.trim_start();
        let end = if trimmed.starts_with(',') {
            span.end + (rest.len() - trimmed.len()) as u32 + 1
        } else {
            span.end
        };
        self.blank(Span::new(span.start, end));
    }

    /// Blank the first `mark` (`?` or `!`) from `from` on, before `to`.
    fn blank_mark(&mut self, mark: char, from: u32, to: u32) {
        if let Some(text) = self.source.get(from as usize..to as usize)
            && let Some(i) = text.find(mark)
        {
            let at = from + i as u32;
            self.blank(Span::new(at, at + 1));
        }
    }

    /// Blank TypeScript's modifier words (`public`, `readonly`, …) in `from..to`, the text of
    /// a class member before its name.
    fn blank_modifiers(&mut self, from: u32, to: u32) {
        let Some(text) = self.source.get(from as usize..to as usize) else {
            return;
        };
        let mut offset = 0;
        for word in text.split_inclusive(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')) {
            let bare =
                word.trim_end_matches(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'));
            if TS_MODIFIERS.contains(&bare) || bare == "abstract" {
                let at = from + offset;
                self.blank(Span::new(at, at + bare.len() as u32));
            }
            offset += word.len() as u32;
        }
    }

    /// Whether a declaration has no JavaScript in it (a type, an interface, a `declare`).
    fn type_only(declaration: &Declaration<'_>) -> bool {
        match declaration {
            Declaration::TSTypeAliasDeclaration(_) | Declaration::TSInterfaceDeclaration(_) => true,
            Declaration::VariableDeclaration(d) => d.declare,
            Declaration::FunctionDeclaration(f) => f.declare || f.body.is_none(),
            Declaration::ClassDeclaration(c) => c.declare,
            Declaration::TSEnumDeclaration(e) => e.declare,
            Declaration::TSExternalModuleDeclaration(m) => m.declare,
            Declaration::TSNamespaceDeclaration(n) => n.declare,
            Declaration::TSGlobalDeclaration(_) => true,
            Declaration::TSImportEqualsDeclaration(i) => i.import_kind.is_type(),
        }
    }

    fn check_declaration(&mut self, declaration: &Declaration<'_>) {
        match declaration {
            Declaration::TSEnumDeclaration(e) => self.refuse("`enum`", e.span),
            Declaration::TSNamespaceDeclaration(n) => {
                self.refuse("`namespace` with values", n.span)
            }
            Declaration::TSExternalModuleDeclaration(m) => {
                self.refuse("`module` with values", m.span)
            }
            Declaration::TSImportEqualsDeclaration(i) => self.refuse("`import … = …`", i.span),
            _ => {}
        }
    }
}

/// Every kind of node that nests without end passes through one of the methods that checks
/// [`Scan::too_deep`]: expressions (a chain of `1+1+…`, built by a loop and as deep as it is
/// long), statements, patterns, assignment targets and TypeScript types and names.
impl<'a> Visit<'a> for Scan<'_> {
    fn visit_expression(&mut self, it: &Expression<'a>) {
        if !self.too_deep(it.span()) {
            walk::walk_expression(self, it);
        }
    }

    fn visit_binding_pattern(&mut self, it: &BindingPattern<'a>) {
        if !self.too_deep(it.span()) {
            walk::walk_binding_pattern(self, it);
        }
    }

    fn visit_assignment_target(&mut self, it: &AssignmentTarget<'a>) {
        if !self.too_deep(it.span()) {
            walk::walk_assignment_target(self, it);
        }
    }

    fn visit_ts_type(&mut self, it: &TSType<'a>) {
        if !self.too_deep(it.span()) {
            walk::walk_ts_type(self, it);
        }
    }

    fn visit_ts_type_name(&mut self, it: &TSTypeName<'a>) {
        if !self.too_deep(it.span()) {
            walk::walk_ts_type_name(self, it);
        }
    }

    fn visit_ts_import_type_qualifier(&mut self, it: &TSImportTypeQualifier<'a>) {
        if !self.too_deep(it.span()) {
            walk::walk_ts_import_type_qualifier(self, it);
        }
    }

    fn visit_ts_namespace_declaration(&mut self, it: &TSNamespaceDeclaration<'a>) {
        if !self.too_deep(it.span) {
            walk::walk_ts_namespace_declaration(self, it);
        }
    }

    fn visit_statement(&mut self, it: &Statement<'a>) {
        if self.too_deep(it.span()) {
            return;
        }
        if !self.typescript {
            return walk::walk_statement(self, it);
        }
        let type_only = match it {
            Statement::ImportDeclaration(i) => i.import_kind.is_type(),
            Statement::ExportDeclaration(e) => Self::type_only(&e.declaration),
            Statement::ExportNamedDeclaration(e) => e.export_kind.is_type(),
            Statement::ExportFromDeclaration(e) => e.export_kind.is_type(),
            Statement::ExportAllDeclaration(e) => e.export_kind.is_type(),
            Statement::ExportDefaultDeclaration(e) => matches!(
                &e.declaration,
                ExportDefaultDeclarationKind::TSInterfaceDeclaration(_)
            ),
            Statement::TSNamespaceExportDeclaration(_) => true,
            Statement::TSExportAssignment(e) => {
                self.refuse("`export =`", e.span);
                false
            }
            _ => match it.as_declaration() {
                Some(declaration) => Self::type_only(declaration),
                None => false,
            },
        };
        if type_only {
            return self.blank(it.span());
        }
        if let Some(declaration) = it.as_declaration() {
            self.check_declaration(declaration);
        }
        if let Statement::ExportDeclaration(e) = it {
            self.check_declaration(&e.declaration);
        }
        walk::walk_statement(self, it);
    }

    fn visit_import_declaration(&mut self, it: &ImportDeclaration<'a>) {
        self.import(&it.source, false, it.with_clause.as_deref());
        walk::walk_import_declaration(self, it);
    }

    fn visit_export_from_declaration(&mut self, it: &ExportFromDeclaration<'a>) {
        self.import(&it.source, false, it.with_clause.as_deref());
        walk::walk_export_from_declaration(self, it);
    }

    fn visit_export_all_declaration(&mut self, it: &ExportAllDeclaration<'a>) {
        self.import(&it.source, false, it.with_clause.as_deref());
        walk::walk_export_all_declaration(self, it);
    }

    fn visit_import_expression(&mut self, it: &ImportExpression<'a>) {
        if let Expression::StringLiteral(literal) = &it.source {
            self.import(literal, true, None);
        }
        walk::walk_import_expression(self, it);
    }

    fn visit_import_specifier(&mut self, it: &ImportSpecifier<'a>) {
        if it.import_kind.is_type() {
            return self.blank_with_comma(it.span);
        }
        walk::walk_import_specifier(self, it);
    }

    fn visit_export_specifier(&mut self, it: &ExportSpecifier<'a>) {
        if it.export_kind.is_type() {
            return self.blank_with_comma(it.span);
        }
        walk::walk_export_specifier(self, it);
    }

    fn visit_ts_type_annotation(&mut self, it: &TSTypeAnnotation<'a>) {
        self.blank(it.span);
    }

    fn visit_ts_type_parameter_declaration(&mut self, it: &TSTypeParameterDeclaration<'a>) {
        self.blank(it.span);
    }

    fn visit_ts_type_parameter_instantiation(&mut self, it: &TSTypeParameterInstantiation<'a>) {
        self.blank(it.span);
    }

    fn visit_ts_this_parameter(&mut self, it: &TSThisParameter<'a>) {
        self.blank_with_comma(it.span);
    }

    fn visit_ts_as_expression(&mut self, it: &TSAsExpression<'a>) {
        self.blank(Span::new(it.expression.span().end, it.span.end));
        self.visit_expression(&it.expression);
    }

    fn visit_ts_satisfies_expression(&mut self, it: &TSSatisfiesExpression<'a>) {
        self.blank(Span::new(it.expression.span().end, it.span.end));
        self.visit_expression(&it.expression);
    }

    fn visit_ts_non_null_expression(&mut self, it: &TSNonNullExpression<'a>) {
        self.blank_mark('!', it.expression.span().end, it.span.end);
        self.visit_expression(&it.expression);
    }

    fn visit_ts_type_assertion(&mut self, it: &TSTypeAssertion<'a>) {
        self.blank(Span::new(it.span.start, it.expression.span().start));
        self.visit_expression(&it.expression);
    }

    fn visit_ts_instantiation_expression(&mut self, it: &TSInstantiationExpression<'a>) {
        self.blank(it.type_arguments.span);
        self.visit_expression(&it.expression);
    }

    fn visit_formal_parameter(&mut self, it: &FormalParameter<'a>) {
        if it.accessibility.is_some() || it.readonly || it.r#override {
            self.refuse("parameter properties (`constructor(private x)`)", it.span);
        }
        if it.optional {
            let to = it
                .type_annotation
                .as_ref()
                .map_or(it.span.end, |t| t.span.start);
            self.blank_mark('?', it.pattern.span().end, to);
        }
        walk::walk_formal_parameter(self, it);
    }

    fn visit_variable_declarator(&mut self, it: &VariableDeclarator<'a>) {
        if it.definite {
            let to = it
                .type_annotation
                .as_ref()
                .map_or(it.span.end, |t| t.span.start);
            self.blank_mark('!', it.id.span().end, to);
        }
        walk::walk_variable_declarator(self, it);
    }

    fn visit_class(&mut self, it: &Class<'a>) {
        if it.r#abstract {
            let to = it
                .id
                .as_ref()
                .map_or(it.body.span.start, |id| id.span.start);
            let from = it.decorators.last().map_or(it.span.start, |d| d.span.end);
            self.blank_modifiers(from, to);
        }
        if let (Some(first), Some(last)) = (it.implements.first(), it.implements.last()) {
            let before = &self.source[..first.span.start as usize];
            if let Some(at) = before.rfind("implements") {
                self.blank(Span::new(at as u32, last.span.end));
            }
        }
        walk::walk_class(self, it);
    }

    fn visit_class_element(&mut self, it: &ClassElement<'a>) {
        if !self.typescript {
            return walk::walk_class_element(self, it);
        }
        match it {
            ClassElement::TSIndexSignature(s) => return self.blank(s.span),
            ClassElement::MethodDefinition(m) => {
                if m.r#type == MethodDefinitionType::TSAbstractMethodDefinition
                    || m.value.body.is_none()
                {
                    return self.blank(m.span);
                }
                let from = m.decorators.last().map_or(m.span.start, |d| d.span.end);
                self.blank_modifiers(from, m.key.span().start);
                if m.optional {
                    self.blank_mark('?', m.key.span().end, m.value.params.span.start);
                }
            }
            ClassElement::PropertyDefinition(p) => {
                if p.declare || p.r#type == PropertyDefinitionType::TSAbstractPropertyDefinition {
                    return self.blank(p.span);
                }
                let from = p.decorators.last().map_or(p.span.start, |d| d.span.end);
                self.blank_modifiers(from, p.key.span().start);
                let to = p
                    .type_annotation
                    .as_ref()
                    .map(|t| t.span.start)
                    .or_else(|| p.value.as_ref().map(|v| v.span().start))
                    .unwrap_or(p.span.end);
                if p.optional {
                    self.blank_mark('?', p.key.span().end, to);
                }
                if p.definite {
                    self.blank_mark('!', p.key.span().end, to);
                }
            }
            ClassElement::AccessorProperty(a) => {
                if a.r#type == AccessorPropertyType::TSAbstractAccessorProperty {
                    return self.blank(a.span);
                }
                let from = a.decorators.last().map_or(a.span.start, |d| d.span.end);
                self.blank_modifiers(from, a.key.span().start);
            }
            ClassElement::StaticBlock(_) => {}
        }
        walk::walk_class_element(self, it);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(source: &str) -> String {
        scan("t.ts", source, true).expect("strips").source
    }

    #[test]
    fn types_become_spaces_at_the_same_positions() {
        let ts = "const n: number = 1;\nfunction f<T>(a: T, b?: string): T { return a as T; }\n";
        let js = strip(ts);
        assert_eq!(js.len(), ts.len());
        assert_eq!(
            js,
            "const n         = 1;\nfunction f   (a   , b         )    { return a     ; }\n"
        );
    }

    #[test]
    fn type_only_statements_and_specifiers_go() {
        let js = strip(
            "import type { A } from './a.js';\nimport { type B, c } from './c.js';\n\
             interface I { x: number }\ntype T = string;\nexport type { T };\nexport const d = c!;\n",
        );
        assert!(!js.contains("type"), "{js}");
        assert!(!js.contains("interface"), "{js}");
        assert!(js.contains("import {"), "{js}");
        assert!(js.contains("c } from './c.js';"), "{js}");
        assert!(js.contains("export const d = c ;"), "{js}");
    }

    #[test]
    fn class_modifiers_and_clauses_go() {
        let js = strip(
            "abstract class A<T> implements I, J {\n  private readonly x: number = 1;\n  \
             abstract m(): void;\n  public get y(): number { return this.x; }\n  z!: string;\n}\n",
        );
        assert!(!js.contains("abstract"), "{js}");
        assert!(!js.contains("implements"), "{js}");
        assert!(!js.contains("private"), "{js}");
        assert!(!js.contains("readonly"), "{js}");
        assert!(!js.contains("public"), "{js}");
        assert!(js.contains(" x         = 1;"), "{js}");
        assert!(js.contains("get y()"), "{js}");
        assert!(js.contains("  z         ;"), "{js}");
    }

    #[test]
    fn code_generating_typescript_is_refused_with_its_position() {
        for (ts, line) in [
            ("let a = 1;\nenum E { A }\n", 2),
            ("class C {\n  constructor(private x: number) {}\n}\n", 2),
            ("namespace N { export const x = 1; }\n", 1),
        ] {
            match scan("t.ts", ts, true) {
                Err(Error::GuestSyntax {
                    location: Some(l), ..
                }) => assert_eq!(l.line, line, "{ts}"),
                other => panic!("{ts}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_typescript_syntax_error_points_into_the_ts_source() {
        match scan("t.ts", "const a: number = 1;\nconst b = (;\n", true) {
            Err(Error::GuestSyntax {
                message,
                location: Some(l),
                ..
            }) => {
                assert!(message.starts_with("t.ts: "), "{message}");
                assert_eq!((l.line, l.column), (2, 12));
            }
            other => panic!("{other:?}"),
        }
    }

    /// Issue 38, item 23: the imports of a module that does not parse are left to the guest.
    #[test]
    fn the_imports_of_a_module_that_does_not_parse_may_fail() {
        let broken = scan("a.js", "import { s } from \"./x.js\";\nconst x;\n", false).unwrap();
        assert_eq!(broken.imports.len(), 1);
        assert!(broken.imports[0].in_broken_module && broken.imports[0].may_fail());
        let fine = scan("a.js", "import { s } from \"./x.js\";\n", false).unwrap();
        assert!(!fine.imports[0].may_fail());
    }

    /// Issue 38, item 1: nesting past the host's stack bound is `guest_syntax`, from the parse
    /// (parentheses) and from the walk over a tree a loop built (`1+1+…`); a thread with a small
    /// stack may call it, since the parse has its own.
    #[test]
    fn nesting_past_the_bound_is_guest_syntax_on_any_thread() {
        let deep = |source: String| {
            std::thread::Builder::new()
                .stack_size(256 << 10)
                .spawn(move || scan("a.js", &source, false).map(|s| s.imports.len()))
                .unwrap()
                .join()
                .unwrap()
        };
        let parens = format!(
            "export default {}1{};\n",
            "(".repeat(400_000),
            ")".repeat(400_000)
        );
        let chain = format!("export default 1{};\n", "+1".repeat(2_000_000));
        for source in [parens, chain] {
            let error = deep(source).unwrap_err();
            assert_eq!(error.code(), "guest_syntax");
            assert!(error.to_string().contains("nested too deeply"), "{error}");
        }
        let fine = format!(
            "import \"./x.js\";\nexport default {}1{};\n",
            "(".repeat(1_000),
            ")".repeat(1_000)
        );
        assert_eq!(deep(fine).unwrap(), 1);
    }

    #[test]
    fn imports_are_listed_with_their_positions() {
        let scanned = scan(
            "m.js",
            "import a from './a.js';\nexport * from \"./b.js\";\nconst c = await import('./c.js');\nimport(name);\n",
            false,
        )
        .unwrap();
        let specifiers: Vec<_> = scanned
            .imports
            .iter()
            .map(|i| (i.specifier.as_str(), i.line, i.dynamic))
            .collect();
        assert_eq!(
            specifiers,
            [
                ("./a.js", 1, false),
                ("./b.js", 2, false),
                ("./c.js", 3, true)
            ]
        );
    }
}
