//! Backend selection. Burn 0.22 picks its backend at run time from the [`Device`]; Cargo
//! features decide which backends are compiled in: the CPU backend (`flex`) always, CUDA with
//! the `cuda` feature, wgpu (Vulkan/Metal/DX12/WebGPU through WGSL) with `wgpu`.
//!
//! A GPU device is checked once per process the first time [`DeviceKind::device`] hands it
//! out ([`check_device`]): Burn reports a missing driver by panicking on first use, which
//! would otherwise happen deep inside self-play or training, with a backtrace hint.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::str::FromStr;
use std::sync::{Arc, Mutex, OnceLock};

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
            kind.unchecked_device().is_ok_and(|d| d == *device || d.clone().autodiff() == *device)
        })
    }

    /// The Burn device (without autodiff; use `.autodiff()` to train). A GPU is checked the
    /// first time in the process ([`check_device`]; the result is kept), so a missing driver
    /// or adapter is this error, not a panic on first use.
    pub fn device(self) -> Result<Device, DeviceError> {
        let device = self.unchecked_device()?;
        if self == DeviceKind::Cpu {
            return Ok(device);
        }
        static CHECKED: [OnceLock<Result<(), DeviceError>>; 3] =
            [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        let index = DeviceKind::ALL.iter().position(|&k| k == self).unwrap_or(0);
        CHECKED[index].get_or_init(|| check_device(&device)).clone()?;
        Ok(device)
    }

    /// The Burn device without the check (devices are lazy: nothing touches a driver here).
    fn unchecked_device(self) -> Result<Device, DeviceError> {
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
/// (which Burn reports by panicking) into an error. The panic is caught without being printed:
/// the process's panic hook is replaced while the computation runs (a panic of another thread
/// in that moment is not printed either). The hook keeps the messages of every thread's panic:
/// CubeCL runs a device on its own thread, whose panic (cudarc's missing driver) reaches the
/// caller only as a closed channel (`RecvError`).
pub fn check_device(device: &Device) -> Result<(), DeviceError> {
    let hook = std::panic::take_hook();
    let panics: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = Arc::clone(&panics);
    std::panic::set_hook(Box::new(move |info| {
        if let Ok(mut panics) = sink.lock() {
            panics.push(panic_message(info.payload()).unwrap_or("").to_string());
        }
    }));
    let result = catch_unwind(AssertUnwindSafe(|| {
        let x = Tensor::<1>::from_floats([1.0, 2.0], device);
        let data = x.mul_scalar(2.0).sum().try_into_data().map_err(|e| format!("{e:?}"))?;
        data.try_to_vec::<f32>().map_err(|e| format!("{e:?}"))
    }));
    std::panic::set_hook(hook);
    let kind = DeviceKind::of(device);
    // The panics of other threads (a GPU backend's device thread), the caller's own aside.
    let others = |message: &str| -> Vec<String> {
        let all = panics.lock().map(|p| p.clone()).unwrap_or_default();
        all.into_iter().filter(|m| m != message).collect()
    };
    match result {
        Ok(Ok(values)) if values == [6.0] => Ok(()),
        Ok(Ok(values)) => Err(DeviceError::Unavailable(format!(
            "{device:?} computed {values:?} for 2 * (1 + 2), expected [6.0]"
        ))),
        Ok(Err(error)) => Err(failure(kind, device, &error, &others(&error))),
        Err(panic) => {
            let message = panic_message(panic.as_ref()).unwrap_or("panic without a message");
            Err(failure(kind, device, message, &others(message)))
        }
    }
}

/// The text a panic was raised with (`panic!("...")` or a formatted message), if any.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
}

/// The name of the part behind `device` as its backend reports it (a GPU's model, e.g.
/// "NVIDIA H100 80GB HBM3"), or the device's debug form where there is none (the CPU, or a
/// build without a GPU backend). Opens the device.
pub fn device_name(device: &Device) -> String {
    #[cfg(any(feature = "cuda", feature = "wgpu"))]
    if let Some(identity) = device.identity() {
        return identity.name;
    }
    format!("{device:?}")
}

/// The error for a device whose first computation failed with `message` while other threads
/// panicked with `others`: a missing driver library gets its own variant (the message names
/// the library), anything else is passed on as the first line of the caller's message and of
/// at most two of the others (Burn's messages can run to a page). A GPU backend's device
/// thread panics with the cause and the caller sees only a closed channel (`RecvError`).
fn failure(
    kind: Option<DeviceKind>,
    device: &Device,
    message: &str,
    others: &[String],
) -> DeviceError {
    // cudarc (the CUDA bindings under cubecl-cuda) loads the driver when it is first called.
    let no_cuda = |m: &str| m.contains("Unable to dynamically load the \"cuda\" shared library");
    if kind == Some(DeviceKind::Cuda) && (no_cuda(message) || others.iter().any(|m| no_cuda(m))) {
        return DeviceError::NoDriver { kind: DeviceKind::Cuda, library: "libcuda.so.1" };
    }
    let first = |m: &str| -> String {
        m.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or(m).to_string()
    };
    // wgpu's device thread: `Unable to acquire wgpu device: AdapterUnavailable { .., message:
    // "no adapter found on the requested graphics API" }`.
    let no_adapter = |m: &str| m.contains("AdapterUnavailable") || m.contains("no adapter found");
    if kind == Some(DeviceKind::Wgpu)
        && let Some(m) = std::iter::once(message)
            .chain(others.iter().map(String::as_str))
            .find(|m| no_adapter(m))
    {
        let detail = first(m);
        let detail = match detail.find("message: \"") {
            Some(at) => detail[at + 10..].trim_end_matches(['"', '}', ' ', ')']).to_string(),
            None => detail,
        };
        return DeviceError::NoAdapter { kind: DeviceKind::Wgpu, detail };
    }
    let causes: Vec<String> = others.iter().take(2).map(|m| first(m)).collect();
    let shown = if causes.is_empty() {
        first(message)
    } else {
        format!("{} (on the device's thread: {})", first(message), causes.join("; "))
    };
    DeviceError::Unavailable(format!("{device:?}: {shown}"))
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
    /// The driver's library could not be loaded: no driver on this machine, or not on the
    /// dynamic loader's path.
    NoDriver {
        /// The requested kind.
        kind: DeviceKind,
        /// The library that was looked for.
        library: &'static str,
    },
    /// The backend found no adapter (GPU) it can drive: no Vulkan, Metal or DX12 driver
    /// for wgpu on this machine.
    NoAdapter {
        /// The requested kind.
        kind: DeviceKind,
        /// What the backend said.
        detail: String,
    },
    /// The backend is compiled in but failed at run time (no GPU, a kernel that failed, ...).
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
            DeviceError::NoDriver { kind, library } => write!(
                f,
                "device {kind}: cannot load the driver library {library} (no {} driver on this \
                 machine, or its library is not on the loader's path, LD_LIBRARY_PATH)",
                match kind {
                    DeviceKind::Cuda => "NVIDIA",
                    _ => "GPU",
                }
            ),
            DeviceError::NoAdapter { kind, detail } => write!(
                f,
                "device {kind}: no GPU adapter found ({detail}): no Vulkan, Metal or DX12 \
                 driver it can use on this machine (with an NVIDIA GPU on Linux: the driver's \
                 Vulkan ICD and its graphics libraries; docs/gpu.md)"
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
                Err(error @ DeviceError::NotCompiledIn { .. }) => {
                    assert!(!kind.is_compiled_in());
                    assert!(error.to_string().contains(&format!("--features {}", kind.name())));
                }
                // Compiled in: present, or missing on this machine (no driver, no adapter).
                _ => assert!(kind.is_compiled_in()),
            }
        }
    }

    #[test]
    fn cpu_device_works() {
        check_device(&DeviceKind::Cpu.device().unwrap()).unwrap();
    }

    #[test]
    fn a_missing_cuda_driver_is_named() {
        let cpu = DeviceKind::Cpu.device().unwrap();
        // cudarc's message when libcuda cannot be loaded (cudarc 0.19, `panic_no_lib_found`).
        let message = "Unable to dynamically load the \"cuda\" shared library - searched for \
                       library names: [\"libcuda.so\", \"libcuda.so.1\"]. Ensure that ...";
        let error = failure(Some(DeviceKind::Cuda), &cpu, message, &[]);
        assert_eq!(
            error,
            DeviceError::NoDriver { kind: DeviceKind::Cuda, library: "libcuda.so.1" }
        );
        let line = error.to_string();
        assert!(line.starts_with("device cuda: cannot load the driver library libcuda.so.1"));
        assert!(!line.contains('\n'));
        // The same panic on the device's thread, the caller seeing a closed channel.
        let closed = "called `Result::unwrap()` on an `Err` value: RecvError";
        let error = failure(Some(DeviceKind::Cuda), &cpu, closed, &[message.to_string()]);
        assert_eq!(
            error,
            DeviceError::NoDriver { kind: DeviceKind::Cuda, library: "libcuda.so.1" }
        );
        // Other failures keep the first non-empty line of each message, the device thread's
        // named as the cause (wgpu on an H200 without glvnd said only RecvError before).
        let other = failure(Some(DeviceKind::Cuda), &cpu, "\nkernel failed\nbacktrace ...", &[]);
        assert!(other.to_string().ends_with(": kernel failed"), "{other}");
        let thread = "Illegal address\nmore lines".to_string();
        let other = failure(Some(DeviceKind::Cuda), &cpu, closed, &[thread]);
        assert!(
            other.to_string().ends_with("RecvError (on the device's thread: Illegal address)"),
            "{other}"
        );
        // wgpu without an adapter (an H200 in a container without the driver's graphics
        // libraries, 2026-11-28): its own error, with what the backend said.
        let thread = "Unable to acquire wgpu device: AdapterUnavailable { device: WgpuDevice { \
                      kind: DefaultDevice, backend: Auto }, message: \"no adapter found on the \
                      requested graphics API\" }\nmore lines"
            .to_string();
        let error = failure(Some(DeviceKind::Wgpu), &cpu, closed, &[thread]);
        assert_eq!(
            error,
            DeviceError::NoAdapter {
                kind: DeviceKind::Wgpu,
                detail: "no adapter found on the requested graphics API".to_string()
            }
        );
        assert!(error.to_string().starts_with("device wgpu: no GPU adapter found (no adapter found on the requested graphics API): no Vulkan"), "{error}");
    }
}
