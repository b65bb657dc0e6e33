//! A toolhost in a real pseudo-terminal, and the screen it drew as a
//! terminal would (through vt100): the chat's tests and the grants asked
//! for in it.

use std::fs::File;
use std::io::{Read as _, Write as _};
use std::os::fd::FromRawFd as _;
use std::os::unix::process::CommandExt as _;
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Workspace;

const ROWS: u16 = 30;
const COLUMNS: u16 = 100;

/// A toolhost in a pseudo-terminal, and the screen it drew.
pub struct Pty {
    child: Child,
    input: File,
    screen: Arc<Mutex<vt100::Parser>>,
}

/// A chat left running by a failed test would wait for keys forever (the
/// screen reader keeps the terminal open): it is killed.
impl Drop for Pty {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Pty {
    pub fn spawn(ws: &Workspace, args: &[&str]) -> Pty {
        Pty::spawn_answering(ws, args, true)
    }

    /// As [`Pty::spawn`], on a terminal that answers the cursor-position
    /// query (`ESC [ 6 n`) or, like some, never does.
    pub fn spawn_answering(ws: &Workspace, args: &[&str], answers_position: bool) -> Pty {
        let (mut master, mut slave) = (0, 0);
        let size = libc::winsize {
            ws_row: ROWS,
            ws_col: COLUMNS,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: out-pointers to two ints and a valid winsize.
        let opened = unsafe {
            libc::openpty(
                &raw mut master,
                &raw mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                &raw const size,
            )
        };
        assert_eq!(opened, 0, "openpty");
        // SAFETY: openpty returned these descriptors, owned from here on.
        let (master, slave) = unsafe { (File::from_raw_fd(master), File::from_raw_fd(slave)) };
        let mut command = ws.toolhost_process();
        command
            .args(args)
            .env("TERM", "xterm-256color")
            .stdin(slave.try_clone().expect("dup"))
            .stdout(slave.try_clone().expect("dup"))
            .stderr(slave);
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("start toolhost chat");
        drop(command);
        let screen = Arc::new(Mutex::new(vt100::Parser::new(
            ROWS.try_into().expect("rows"),
            COLUMNS.try_into().expect("columns"),
            0,
        )));
        let mut output = master.try_clone().expect("dup");
        let mut answers = master.try_clone().expect("dup");
        let parsed = Arc::clone(&screen);
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            loop {
                let n = match output.read(&mut buffer) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                let mut parser = parsed.lock().expect("screen");
                parser.process(&buffer[..n]);
                // The inline viewport asks where the cursor is; answer as a
                // terminal does.
                if answers_position && buffer[..n].windows(4).any(|w| w == b"\x1b[6n") {
                    let (row, column) = parser.screen().cursor_position();
                    let _ = write!(answers, "\x1b[{};{}R", row + 1, column + 1);
                }
            }
        });
        Pty {
            child,
            input: master,
            screen,
        }
    }

    pub fn text(&self) -> String {
        self.screen.lock().expect("screen").screen().contents()
    }

    /// Waits until the screen shows `text`.
    #[track_caller]
    pub fn wait_for(&self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if self.text().contains(text) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the screen never showed {text:?}:\n{}", self.text());
    }

    pub fn keys(&mut self, keys: &str) {
        self.input.write_all(keys.as_bytes()).expect("type");
        self.input.flush().expect("flush");
        // A lone Esc is told from the start of a sequence by a pause.
        std::thread::sleep(Duration::from_millis(60));
    }

    /// Waits for the exit; its code, and the screen it left.
    pub fn exit_code_and_screen(self) -> (Option<i32>, String) {
        let screen = Arc::clone(&self.screen);
        let code = self.exit_code();
        let text = screen.lock().expect("screen").screen().contents();
        (code, text)
    }

    /// Waits for the exit; its code.
    pub fn exit_code(mut self) -> Option<i32> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("toolhost chat did not exit:\n{}", self.text());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A script of `turns` for `--script`, written in the workspace.
pub fn script(ws: &Workspace, turns: Value) -> String {
    ws.write("script.json", json!({ "turns": turns }).to_string())
        .display()
        .to_string()
}
