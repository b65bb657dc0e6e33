//! The chat's terminal backend: crossterm's, but for a terminal that
//! never says where its cursor is. The inline viewport asks once
//! (`ESC [ 6 n`) to know where to draw; some terminals and multiplexers
//! do not answer, and crossterm's wait then ends in an error. Then the
//! cursor is taken to be on the last row (where a shell leaves it after
//! printing), the viewport is drawn at the bottom, and the terminal is not
//! asked again.

use std::io;

use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};

/// [`CrosstermBackend`] that survives an unanswered cursor query.
pub(super) struct ChatBackend<W: io::Write> {
    inner: CrosstermBackend<W>,
    /// The terminal did not answer once: it is not asked again.
    unanswered: bool,
}

impl<W: io::Write> ChatBackend<W> {
    pub(super) fn new(writer: W) -> Self {
        ChatBackend {
            inner: CrosstermBackend::new(writer),
            unanswered: false,
        }
    }
}

impl<W: io::Write> Backend for ChatBackend<W> {
    type Error = io::Error;

    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.inner.draw(content)
    }

    fn append_lines(&mut self, n: u16) -> io::Result<()> {
        self.inner.append_lines(n)
    }

    fn hide_cursor(&mut self) -> io::Result<()> {
        self.inner.hide_cursor()
    }

    fn show_cursor(&mut self) -> io::Result<()> {
        self.inner.show_cursor()
    }

    fn get_cursor_position(&mut self) -> io::Result<Position> {
        if !self.unanswered {
            match self.inner.get_cursor_position() {
                Ok(position) => return Ok(position),
                Err(_) => self.unanswered = true,
            }
        }
        let size = self.inner.size()?;
        Ok(Position::new(0, size.height.saturating_sub(1)))
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        self.inner.set_cursor_position(position)
    }

    fn clear(&mut self) -> io::Result<()> {
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> io::Result<()> {
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> io::Result<Size> {
        self.inner.size()
    }

    fn window_size(&mut self) -> io::Result<WindowSize> {
        self.inner.window_size()
    }

    fn flush(&mut self) -> io::Result<()> {
        Backend::flush(&mut self.inner)
    }

    fn scroll_region_up(
        &mut self,
        region: std::ops::Range<u16>,
        line_count: u16,
    ) -> io::Result<()> {
        self.inner.scroll_region_up(region, line_count)
    }

    fn scroll_region_down(
        &mut self,
        region: std::ops::Range<u16>,
        line_count: u16,
    ) -> io::Result<()> {
        self.inner.scroll_region_down(region, line_count)
    }
}
