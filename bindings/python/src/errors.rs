//! How the module raises: the caller's own mistake is a `TypeError`; an error of the library is
//! a `NativeError` whose one argument is the error's JSON, which `__init__.py` turns into a
//! `PalisadeError` with the library's code.

use palisade_bindings::{Refused, thrown_json};
use pyo3::PyErr;
use pyo3::exceptions::{PyException, PyTypeError};

pyo3::create_exception!(_native, NativeError, PyException);

/// The exception for a refused request or setting.
pub fn refused(refused: Refused) -> PyErr {
    match refused {
        Refused::Usage(message) => PyTypeError::new_err(message),
        Refused::Call(error, _) => library(&error),
    }
}

/// The exception for an error of the library.
pub fn library(error: &palisade::Error) -> PyErr {
    NativeError::new_err(thrown_json(error).to_string())
}
