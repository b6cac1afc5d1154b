//! How the addon throws: the reason is JSON that `index.js` turns into a `TypeError` (the
//! caller's own mistake) or a `PalisadeError` with the library's code.

use palisade_bindings::{Refused, thrown_json};
use serde_json::json;

/// A thrown error for a refused request or setting.
pub fn refused(refused: Refused) -> napi::Error {
    match refused {
        Refused::Usage(message) => type_error(message),
        Refused::Call(error, _) => library(&error),
    }
}

/// A thrown error for the caller's own mistake.
pub fn type_error(message: String) -> napi::Error {
    napi::Error::from_reason(json!({ "type_error": message }).to_string())
}

/// A thrown error for an error of the library, with its code.
pub fn library(error: &palisade::Error) -> napi::Error {
    napi::Error::from_reason(json!({ "error": thrown_json(error) }).to_string())
}
