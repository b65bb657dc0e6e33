//! The input line of `toolhost chat`: text with a cursor (several lines when
//! pasted), the usual readline keys, and the history of what was sent.

/// The text being typed, its cursor (a byte offset on a character
/// boundary) and the history.
#[derive(Debug, Default)]
pub(crate) struct Editor {
    text: String,
    cursor: usize,
    history: Vec<String>,
    /// Where Up/Down is in the history; `None` when editing new text.
    browsing: Option<usize>,
    /// The new text kept while browsing the history.
    draft: String,
}

impl Editor {
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Inserts typed or pasted text at the cursor (a paste keeps its line
    /// breaks: it is sent as one message).
    pub(crate) fn insert(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        self.text.insert_str(self.cursor, &text);
        self.cursor += text.len();
        self.browsing = None;
    }

    pub(crate) fn backspace(&mut self) {
        if let Some(before) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= before.len_utf8();
            self.text.remove(self.cursor);
        }
    }

    pub(crate) fn delete(&mut self) {
        if self.cursor < self.text.len() {
            self.text.remove(self.cursor);
        }
    }

    pub(crate) fn left(&mut self) {
        if let Some(before) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= before.len_utf8();
        }
    }

    pub(crate) fn right(&mut self) {
        if let Some(after) = self.text[self.cursor..].chars().next() {
            self.cursor += after.len_utf8();
        }
    }

    /// To the start of the cursor's line.
    pub(crate) fn home(&mut self) {
        self.cursor = self.text[..self.cursor].rfind('\n').map_or(0, |at| at + 1);
    }

    /// To the end of the cursor's line.
    pub(crate) fn end(&mut self) {
        self.cursor += self.text[self.cursor..]
            .find('\n')
            .unwrap_or(self.text.len() - self.cursor);
    }

    /// Ctrl+U: deletes from the start of the line to the cursor.
    pub(crate) fn kill_to_start(&mut self) {
        let start = self.text[..self.cursor].rfind('\n').map_or(0, |at| at + 1);
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Ctrl+K: deletes from the cursor to the end of the line.
    pub(crate) fn kill_to_end(&mut self) {
        let end = self.cursor
            + self.text[self.cursor..]
                .find('\n')
                .unwrap_or(self.text.len() - self.cursor);
        self.text.replace_range(self.cursor..end, "");
    }

    /// Ctrl+W: deletes the word before the cursor.
    pub(crate) fn delete_word(&mut self) {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end();
        let start = trimmed.rfind(char::is_whitespace).map_or(0, |at| {
            at + trimmed[at..].chars().next().map_or(1, char::len_utf8)
        });
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    pub(crate) fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
        self.browsing = None;
    }

    /// Takes the text to send, remembering it in the history.
    pub(crate) fn take(&mut self) -> String {
        let text = std::mem::take(&mut self.text);
        self.cursor = 0;
        self.browsing = None;
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
        }
        text
    }

    /// Replaces what is typed with `text`, the cursor at its end (a
    /// completed command).
    pub(crate) fn replace(&mut self, text: &str) {
        self.text = text.to_string();
        self.cursor = self.text.len();
        self.browsing = None;
    }

    /// Puts text back (messages an interrupt returned) before what is typed.
    pub(crate) fn restore(&mut self, text: &str) {
        if self.text.is_empty() {
            self.text = text.to_string();
        } else {
            self.text = format!("{text}\n{}", self.text);
        }
        self.cursor = self.text.len();
        self.browsing = None;
    }

    /// Up: the previous history entry (keeping what was typed).
    pub(crate) fn up(&mut self) {
        let at = match self.browsing {
            None if self.history.is_empty() => return,
            None => {
                self.draft = std::mem::take(&mut self.text);
                self.history.len() - 1
            }
            Some(0) => return,
            Some(at) => at - 1,
        };
        self.browsing = Some(at);
        self.text = self.history[at].clone();
        self.cursor = self.text.len();
    }

    /// Down: the next history entry, then what was typed.
    pub(crate) fn down(&mut self) {
        let Some(at) = self.browsing else { return };
        if at + 1 < self.history.len() {
            self.browsing = Some(at + 1);
            self.text = self.history[at + 1].clone();
        } else {
            self.browsing = None;
            self.text = std::mem::take(&mut self.draft);
        }
        self.cursor = self.text.len();
    }

    /// The cursor as (line, column in characters) of the text.
    pub(crate) fn cursor_position(&self) -> (usize, usize) {
        let before = &self.text[..self.cursor];
        let line = before.matches('\n').count();
        let column = before
            .rsplit('\n')
            .next()
            .map_or(0, |line| line.chars().count());
        (line, column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(text: &str) -> Editor {
        let mut editor = Editor::default();
        editor.insert(text);
        editor
    }

    #[test]
    fn editing_keys_move_and_delete_by_character_and_line() {
        let mut editor = typed("héllo wörld");
        editor.left();
        editor.left();
        editor.backspace();
        assert_eq!(editor.text(), "héllo wöld");
        editor.home();
        editor.delete();
        assert_eq!(editor.text(), "éllo wöld");
        editor.end();
        editor.delete_word();
        assert_eq!(editor.text(), "éllo ");
        editor.home();
        editor.right();
        editor.kill_to_end();
        assert_eq!(editor.text(), "é");
        editor.insert("a\r\nb");
        assert_eq!(editor.text(), "éa\nb");
        assert_eq!(editor.cursor_position(), (1, 1));
        editor.kill_to_start();
        assert_eq!(editor.text(), "éa\n");
    }

    #[test]
    fn history_keeps_what_was_being_typed() {
        let mut editor = typed("first");
        assert_eq!(editor.take(), "first");
        editor.insert("second");
        editor.take();
        editor.insert("draft");
        editor.up();
        assert_eq!(editor.text(), "second");
        editor.up();
        editor.up();
        assert_eq!(editor.text(), "first");
        editor.down();
        assert_eq!(editor.text(), "second");
        editor.down();
        assert_eq!(editor.text(), "draft");
    }

    #[test]
    fn returned_messages_come_back_before_what_is_typed() {
        let mut editor = typed("new");
        editor.restore("queued one\nqueued two");
        assert_eq!(editor.text(), "queued one\nqueued two\nnew");
    }
}
