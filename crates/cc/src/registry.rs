//! Name → controller lookup used by scenario files and the Python front end.

use crate::cubic::{Cubic, CubicConfig};
use crate::newreno::{NewReno, NewRenoConfig};
use crate::{CongestionControl, ParamError, Params, ReceiveWindowControl};

/// Sender-side algorithms a scenario may name in `cca`.
pub fn controller_names() -> &'static [&'static str] {
    &["newreno", "reno", "cubic"]
}

/// Build a sender-side controller by name. Unknown names and bad parameters are errors whose
/// `key` is `"cca"` or the parameter's name.
pub fn build_controller(name: &str, params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    let cc: Box<dyn CongestionControl> = match name {
        "newreno" | "reno" => Box::new(NewReno::new(NewRenoConfig::from_params(params)?)),
        "cubic" => Box::new(Cubic::new(CubicConfig::from_params(params)?)),
        _ => {
            return Err(ParamError {
                key: "cca".into(),
                message: format!("unknown algorithm \"{name}\" (known: {})", controller_names().join(", ")),
            })
        }
    };
    params.reject_unknown(name)?;
    Ok(cc)
}

/// Build a receiver-side window controller by name (none exist yet; rLEDBAT arrives later).
pub fn build_receiver_control(
    name: &str,
    _params: &Params,
) -> Result<Box<dyn ReceiveWindowControl>, ParamError> {
    Err(ParamError {
        key: "receiver_cca".into(),
        message: format!("unknown receiver-side algorithm \"{name}\""),
    })
}
