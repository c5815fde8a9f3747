//! A spinner on stderr while a command waits for the server, shown only when stderr is a
//! terminal so pipes and logs stay clean.

use std::io::IsTerminal;
use std::time::Duration;

/// A running spinner; cleared on drop.
pub struct Spinner {
    bar: Option<indicatif::ProgressBar>,
}

impl Spinner {
    pub fn start(message: impl Into<String>) -> Self {
        if !std::io::stderr().is_terminal() {
            return Spinner { bar: None };
        }
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_message(message.into());
        bar.enable_steady_tick(Duration::from_millis(100));
        Spinner { bar: Some(bar) }
    }

    pub fn set_message(&self, message: impl Into<String>) {
        if let Some(b) = &self.bar {
            b.set_message(message.into());
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}
