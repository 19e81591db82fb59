//! [`Output`]: where the engine's lines go. The command handler and the search thread both
//! write through clones of one `Output`; each line is written and flushed whole under a lock,
//! so lines from the two threads never interleave.

use std::fmt;
use std::io::Write;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};

/// A shared sink for protocol lines (cheap to clone).
#[derive(Clone)]
pub struct Output {
    sink: Sink,
}

#[derive(Clone)]
enum Sink {
    /// A writer (stdout in `run_stdio`); every line is followed by `\n` and a flush.
    Writer(Arc<Mutex<Box<dyn Write + Send>>>),
    /// A channel of lines without their newline (tests and embedding).
    Channel(Sender<String>),
}

impl fmt::Debug for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.sink {
            Sink::Writer(_) => f.write_str("Output::Writer"),
            Sink::Channel(_) => f.write_str("Output::Channel"),
        }
    }
}

impl Output {
    /// Lines go to standard output.
    pub fn stdout() -> Output {
        Output::writer(std::io::stdout())
    }

    /// Lines go to `writer`, each followed by `\n` and a flush.
    pub fn writer(writer: impl Write + Send + 'static) -> Output {
        Output { sink: Sink::Writer(Arc::new(Mutex::new(Box::new(writer)))) }
    }

    /// Lines go to a channel; the receiver gets each line without its newline.
    pub fn channel() -> (Output, Receiver<String>) {
        let (sender, receiver) = mpsc::channel();
        (Output { sink: Sink::Channel(sender) }, receiver)
    }

    /// Writes one line. Write errors are ignored: a closed standard output means the GUI is
    /// gone, and the reader will see the end of its input.
    pub fn line(&self, line: &str) {
        match &self.sink {
            Sink::Writer(writer) => {
                let mut writer = writer.lock().unwrap_or_else(PoisonError::into_inner);
                let _ = writer.write_all(line.as_bytes());
                let _ = writer.write_all(b"\n");
                let _ = writer.flush();
            }
            Sink::Channel(sender) => {
                let _ = sender.send(line.to_string());
            }
        }
    }

    /// Writes `info string <message>`, with line breaks in the message turned into spaces
    /// (`info string` runs to the end of the line).
    pub fn info_string(&self, message: &str) {
        let flat: String =
            message.chars().map(|c| if c == '\n' || c == '\r' { ' ' } else { c }).collect();
        self.line(&format!("info string {flat}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channel_and_writer_receive_whole_lines() {
        let (out, rx) = Output::channel();
        out.line("readyok");
        out.info_string("two\nlines");
        assert_eq!(rx.try_recv().unwrap(), "readyok");
        assert_eq!(rx.try_recv().unwrap(), "info string two lines");

        #[derive(Clone, Default)]
        struct Shared(Arc<Mutex<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buffer = Shared::default();
        let out = Output::writer(buffer.clone());
        out.line("uciok");
        assert_eq!(&*buffer.0.lock().unwrap(), b"uciok\n");
    }
}
