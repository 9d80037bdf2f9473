//! A function call's arguments and the checks functions share.

use std::collections::BTreeMap;

use super::convert::to_number;
use super::{EvalError, EvalScope, Value};

/// A call of a built-in function: its name, evaluated arguments and the caller's scope.
#[derive(Debug)]
pub struct Call<'a> {
    /// The function's name, for error messages.
    pub name: &'a str,
    /// The evaluated arguments.
    pub args: Vec<Value>,
    /// The scope the call was made in.
    pub scope: &'a EvalScope,
}

impl Call<'_> {
    /// An error of this function with `message`.
    pub fn error(&self, message: impl Into<String>) -> EvalError {
        EvalError::Function {
            function: self.name.to_string(),
            message: message.into(),
        }
    }

    /// Argument `index`, which the arity check guarantees exists unless it is optional.
    pub fn arg(&self, index: usize) -> Result<&Value, EvalError> {
        self.args
            .get(index)
            .ok_or_else(|| self.error(format!("missing argument {}", index + 1)))
    }

    /// Argument `index` converted to a string (numbers and booleans convert).
    pub fn string(&self, index: usize) -> Result<String, EvalError> {
        let value = self.arg(index)?;
        value
            .to_text()
            .ok_or_else(|| self.mismatch(index, "string", value))
    }

    /// Argument `index` converted to a number (numeric strings convert).
    pub fn number(&self, index: usize) -> Result<f64, EvalError> {
        let value = self.arg(index)?;
        to_number(value).ok_or_else(|| self.mismatch(index, "number", value))
    }

    /// Argument `index` as a whole number.
    pub fn integer(&self, index: usize) -> Result<i64, EvalError> {
        let number = self.number(index)?;
        if number.fract() == 0.0 && number.abs() < 9.0e15 {
            Ok(number as i64)
        } else {
            Err(self.error(format!(
                "argument {} must be a whole number, not {number}",
                index + 1
            )))
        }
    }

    /// Argument `index` as a list, tuple or set.
    pub fn list(&self, index: usize) -> Result<&[Value], EvalError> {
        let value = self.arg(index)?;
        value
            .elements()
            .ok_or_else(|| self.mismatch(index, "list", value))
    }

    /// Argument `index` as a map or object.
    pub fn object(&self, index: usize) -> Result<&BTreeMap<String, Value>, EvalError> {
        match self.arg(index)? {
            Value::Object(map) => Ok(map),
            other => Err(self.mismatch(index, "map", other)),
        }
    }

    /// Every argument from `start` on converted to a number.
    pub fn numbers_from(&self, start: usize) -> Result<Vec<f64>, EvalError> {
        (start..self.args.len())
            .map(|index| self.number(index))
            .collect()
    }

    /// Every argument from `start` on as a list.
    pub fn lists_from(&self, start: usize) -> Result<Vec<&[Value]>, EvalError> {
        (start..self.args.len())
            .map(|index| self.list(index))
            .collect()
    }

    fn mismatch(&self, index: usize, expected: &str, found: &Value) -> EvalError {
        self.error(format!(
            "argument {} must be a {expected}, not {}",
            index + 1,
            found.type_name()
        ))
    }
}
