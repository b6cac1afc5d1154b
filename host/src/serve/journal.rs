//! The server's audit log (`--audit-log`): one writer, the library's, for every line. A call's
//! records are written by the library when the call ends, each synced and with the addresses
//! its hosts resolved to; the server adds who called ([`Who`], as the call's audit tags). The
//! lines the server makes itself (an app action's, a session file operation's refusal) go to
//! the same file through [`Journal`], synced the same way.

use crate::AuditRecord;
use crate::audit_file::{AuditFile, Tags};
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;

/// Who is calling: the tenant, and the session and app a call belongs to.
#[derive(Debug, Clone, Copy)]
pub struct Who<'a> {
    /// The tenant's name.
    pub tenant: &'a str,
    /// The session, for a session's run or an app's action.
    pub session: Option<&'a str>,
    /// The app, for an app's call.
    pub app: Option<&'a str>,
}

impl<'a> Who<'a> {
    /// A tenant's call outside any session.
    pub fn tenant(tenant: &'a str) -> Who<'a> {
        Who {
            tenant,
            session: None,
            app: None,
        }
    }

    /// The fields each audit line of this caller carries: `tenant` and `session`, and `app`
    /// for an app's call.
    pub fn tags(&self) -> Tags {
        let mut tags = Tags::new();
        tags.insert("tenant".into(), self.tenant.into());
        tags.insert(
            "session".into(),
            self.session.map_or(Value::Null, Into::into),
        );
        if let Some(app) = self.app {
            tags.insert("app".into(), app.into());
        }
        tags
    }
}

/// The audit log's writer for the server's own lines; nothing when the server keeps no log.
#[derive(Clone, Default)]
pub struct Journal {
    file: Option<Arc<AuditFile>>,
}

/// A record and its caller's tags, as one line.
#[derive(Serialize)]
struct Tagged<'a> {
    #[serde(flatten)]
    record: &'a AuditRecord,
    #[serde(flatten)]
    tags: &'a Tags,
}

impl Journal {
    /// Lines go to `file` (the library's audit log), or nowhere.
    pub(crate) fn new(file: Option<Arc<AuditFile>>) -> Journal {
        Journal { file }
    }

    /// A gated decision made outside a call (a session file operation's refusal).
    pub fn record(&self, who: &Who<'_>, record: &AuditRecord) {
        if let Some(file) = &self.file {
            let tags = who.tags();
            file.append_values(&[Tagged {
                record,
                tags: &tags,
            }]);
        }
    }

    /// A line of the server's own (an app action's).
    pub fn line(&self, line: &impl Serialize) {
        if let Some(file) = &self.file {
            file.append_values(std::slice::from_ref(line));
        }
    }
}
