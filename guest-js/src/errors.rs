//! JavaScript exceptions to the runner's typed errors, in one place.

use crate::exports::palisade::sandbox::runner::{Error, Exception, Location};
use javy::quickjs::{CaughtError, Ctx, Value};

/// A module that failed to declare: a syntax error, reported with its location.
pub fn syntax<'js>(cx: &Ctx<'js>, caught: CaughtError<'js>) -> Error {
    Error::Syntax(exception(cx, caught))
}

/// Describe a caught JavaScript error or thrown value.
pub fn exception<'js>(cx: &Ctx<'js>, caught: CaughtError<'js>) -> Exception {
    match caught {
        CaughtError::Exception(e) => {
            let object = e.as_object();
            let name = object
                .get::<_, Option<String>>("name")
                .ok()
                .flatten()
                .unwrap_or_else(|| "Error".to_owned());
            let message = e.message().unwrap_or_default();
            let stack = e.stack().filter(|s| !s.is_empty());
            let location = stack.as_deref().and_then(first_location);
            Exception {
                name,
                message,
                stack,
                location,
            }
        }
        CaughtError::Value(value) => thrown_value(cx, value),
        CaughtError::Error(error) => Exception {
            name: "InternalError".to_owned(),
            message: error.to_string(),
            stack: None,
            location: None,
        },
    }
}

fn thrown_value<'js>(cx: &Ctx<'js>, value: Value<'js>) -> Exception {
    let name = value.type_name().to_owned();
    let message = javy::val_to_string(cx, value).unwrap_or_else(|_| name.clone());
    Exception {
        name,
        message,
        stack: None,
        location: None,
    }
}

/// The first `file:line:column` frame of a QuickJS stack trace.
fn first_location(stack: &str) -> Option<Location> {
    stack.lines().find_map(|line| {
        let frame = line.trim().strip_prefix("at ")?;
        let frame = frame.rsplit_once('(').map_or(frame, |(_, inner)| inner);
        let frame = frame.trim_end_matches(')');
        let mut parts = frame.rsplitn(3, ':');
        let column = parts.next()?.parse().ok()?;
        let line = parts.next()?.parse().ok()?;
        Some(Location { line, column })
    })
}
