//! Backend selection. Burn 0.22 picks its backend at run time from the [`Device`]; Cargo
//! features decide which backends are compiled in: the CPU backend (`flex`) always, CUDA with
//! the `cuda` feature, wgpu (Vulkan/Metal/DX12/WebGPU through WGSL) with `wgpu`.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::str::FromStr;

use burn::tensor::{Device, Tensor};

/// Where the network runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// Burn's pure-Rust `flex` backend (multi-threaded, SIMD). Measured faster than `ndarray`
    /// on our machines; see the crate README.
    Cpu,
    /// The first CUDA GPU (`cuda` feature).
    Cuda,
    /// The default wgpu adapter (`wgpu` feature); `CUBECL_WGPU_DEFAULT_DEVICE` overrides it.
    Wgpu,
}

impl DeviceKind {
    /// Every kind, in the order of [`DeviceKind::NAMES`].
    pub const ALL: [DeviceKind; 3] = [DeviceKind::Cpu, DeviceKind::Cuda, DeviceKind::Wgpu];
    /// The names [`DeviceKind::from_str`] accepts.
    pub const NAMES: [&'static str; 3] = ["cpu", "cuda", "wgpu"];

    /// The name used in configs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Cpu => "cpu",
            DeviceKind::Cuda => "cuda",
            DeviceKind::Wgpu => "wgpu",
        }
    }

    /// True if this build includes the backend.
    pub fn is_compiled_in(self) -> bool {
        match self {
            DeviceKind::Cpu => true,
            DeviceKind::Cuda => cfg!(feature = "cuda"),
            DeviceKind::Wgpu => cfg!(feature = "wgpu"),
        }
    }

    /// Which kind `device` is (`None` for a device no [`DeviceKind::device`] returns, such as
    /// a second GPU).
    pub fn of(device: &Device) -> Option<DeviceKind> {
        DeviceKind::ALL.into_iter().find(|kind| {
            kind.device().is_ok_and(|d| d == *device || d.clone().autodiff() == *device)
        })
    }

    /// The Burn device (without autodiff; use `.autodiff()` to train). Devices are lazy: a
    /// missing driver shows up on first use, which [`check_device`] turns into an error.
    pub fn device(self) -> Result<Device, DeviceError> {
        match self {
            DeviceKind::Cpu => Ok(Device::flex()),
            DeviceKind::Cuda => {
                #[cfg(feature = "cuda")]
                return Ok(Device::cuda(0));
                #[cfg(not(feature = "cuda"))]
                return Err(DeviceError::NotCompiledIn { kind: self, feature: "cuda" });
            }
            DeviceKind::Wgpu => {
                #[cfg(feature = "wgpu")]
                return Ok(Device::wgpu(burn::tensor::DeviceKind::DefaultDevice));
                #[cfg(not(feature = "wgpu"))]
                return Err(DeviceError::NotCompiledIn { kind: self, feature: "wgpu" });
            }
        }
    }
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DeviceKind {
    type Err = DeviceError;

    fn from_str(s: &str) -> Result<DeviceKind, DeviceError> {
        DeviceKind::ALL
            .into_iter()
            .find(|kind| kind.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| DeviceError::Unknown(s.to_string()))
    }
}

/// Runs one tiny computation on `device` and reads it back, turning a missing driver or GPU
/// (which Burn reports by panicking) into an error.
pub fn check_device(device: &Device) -> Result<(), DeviceError> {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let x = Tensor::<1>::from_floats([1.0, 2.0], device);
        let data = x.mul_scalar(2.0).sum().try_into_data().map_err(|e| format!("{e:?}"))?;
        data.try_to_vec::<f32>().map_err(|e| format!("{e:?}"))
    }));
    match result {
        Ok(Ok(values)) if values == [6.0] => Ok(()),
        Ok(Ok(values)) => Err(DeviceError::Unavailable(format!(
            "{device:?} computed {values:?} for 2 * (1 + 2), expected [6.0]"
        ))),
        Ok(Err(error)) => Err(DeviceError::Unavailable(format!("{device:?}: {error}"))),
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("panic without a message");
            Err(DeviceError::Unavailable(format!("{device:?}: {message}")))
        }
    }
}

/// A device that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceError {
    /// A name that is not `cpu`, `cuda` or `wgpu`.
    Unknown(String),
    /// The backend exists but this binary was built without its Cargo feature.
    NotCompiledIn {
        /// The requested kind.
        kind: DeviceKind,
        /// The feature of `atomzero-nn` that enables it.
        feature: &'static str,
    },
    /// The backend is compiled in but failed at run time (no driver, no adapter, ...).
    Unavailable(String),
}

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceError::Unknown(name) => write!(
                f,
                "unknown device {name:?}: expected one of {}",
                DeviceKind::NAMES.join(", ")
            ),
            DeviceError::NotCompiledIn { kind, feature } => write!(
                f,
                "device {kind} is not available: this binary was built without the `{feature}` \
                 cargo feature (rebuild with `--features {feature}`)"
            ),
            DeviceError::Unavailable(message) => write!(f, "device failed: {message}"),
        }
    }
}

impl std::error::Error for DeviceError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_rejects_others() {
        assert_eq!("cpu".parse::<DeviceKind>().unwrap(), DeviceKind::Cpu);
        assert_eq!(" CUDA ".parse::<DeviceKind>().unwrap(), DeviceKind::Cuda);
        assert_eq!("wgpu".parse::<DeviceKind>().unwrap(), DeviceKind::Wgpu);
        let error = "tpu".parse::<DeviceKind>().unwrap_err();
        assert_eq!(error.to_string(), "unknown device \"tpu\": expected one of cpu, cuda, wgpu");
    }

    #[test]
    fn missing_features_are_reported() {
        for kind in DeviceKind::ALL {
            match kind.device() {
                Ok(_) => assert!(kind.is_compiled_in()),
                Err(error) => {
                    assert!(!kind.is_compiled_in());
                    assert!(error.to_string().contains(&format!("--features {}", kind.name())));
                }
            }
        }
    }

    #[test]
    fn cpu_device_works() {
        check_device(&DeviceKind::Cpu.device().unwrap()).unwrap();
    }
}
