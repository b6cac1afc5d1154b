// The editors' setup: CodeMirror's basic setup (line numbers, history, folding, bracket
// matching, autocompletion, search, lint keys) less bracket closing, so that what is typed is
// what the editor holds (a closing bracket typed is never skipped over or doubled).
import { autocompletion, completionKeymap } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import {
  bracketMatching, defaultHighlightStyle, foldGutter, foldKeymap, indentOnInput, syntaxHighlighting,
} from "@codemirror/language";
import { lintKeymap } from "@codemirror/lint";
import { highlightSelectionMatches, searchKeymap } from "@codemirror/search";
import { EditorState } from "@codemirror/state";
import {
  EditorView, crosshairCursor, drawSelection, dropCursor, highlightActiveLine, highlightActiveLineGutter,
  highlightSpecialChars, keymap, lineNumbers, rectangularSelection,
} from "@codemirror/view";

const setup = [
  lineNumbers(),
  highlightActiveLineGutter(),
  highlightSpecialChars(),
  history(),
  foldGutter(),
  drawSelection(),
  dropCursor(),
  EditorState.allowMultipleSelections.of(true),
  indentOnInput(),
  syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
  bracketMatching(),
  autocompletion(),
  rectangularSelection(),
  crosshairCursor(),
  highlightActiveLine(),
  highlightSelectionMatches(),
  keymap.of([...defaultKeymap, ...searchKeymap, ...historyKeymap, ...foldKeymap, ...completionKeymap, ...lintKeymap]),
];

/** The nonce the server gave this page for its style elements (its CSP allows no other
 *  inline style): CodeMirror puts it on the ones it makes. */
const nonce = document.querySelector('meta[name="palisade-style-nonce"]')?.content ?? "";

/** An editor of `doc` in `parent`, for `language` (a CodeMirror language extension). */
export function editor(parent, doc, language) {
  return new EditorView({ doc, extensions: [setup, language, EditorView.cspNonce.of(nonce)], parent });
}
