//! A script: an ES module's name and source.

use std::path::Path;
use std::sync::Arc;

/// An ES module to run. Cheap to clone; the source is shared.
#[derive(Debug, Clone)]
pub struct Script {
    name: Arc<str>,
    source: Arc<str>,
    /// QuickJS bytecode from [`crate::Palisade::precompile`]: produced in this process by the
    /// embedded guest, never taken from outside.
    bytecode: Option<Arc<[u8]>>,
}

impl Script {
    /// A script from its source text; `name` appears in stack traces and error locations.
    pub fn new(name: impl Into<Arc<str>>, source: impl Into<Arc<str>>) -> Self {
        Self {
            name: name.into(),
            source: source.into(),
            bytecode: None,
        }
    }

    /// Read a script from a file; its file name becomes the module name.
    pub fn from_file(path: impl AsRef<Path>) -> std::io::Result<Self> {
        let path = path.as_ref();
        let source = std::fs::read_to_string(path)?;
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        Ok(Self::new(name, source))
    }

    /// The module name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The module source.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether the script carries precompiled bytecode.
    pub fn is_precompiled(&self) -> bool {
        self.bytecode.is_some()
    }

    pub(crate) fn bytecode(&self) -> Option<&[u8]> {
        self.bytecode.as_deref()
    }

    pub(crate) fn with_bytecode(&self, bytecode: Arc<[u8]>) -> Self {
        Self {
            bytecode: Some(bytecode),
            ..self.clone()
        }
    }
}
