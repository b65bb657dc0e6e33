//! The cap on one reply: how many bytes a model's reply may make toolhost
//! hold, and what happened when it went past them.
//!
//! A model server's output is untrusted, and local servers loop (a model that
//! never emits its stop token, a server that ignores `max_tokens`). Each
//! assembler charges what it keeps (text, reasoning, tool-call ids, names and
//! arguments, and a fixed cost per block) to a [`ReplyBudget`]; past the cap
//! it keeps nothing more and the client stops reading. The reply then ends as
//! cut by the output limit ([`super::Finish::Length`]), so its tool calls
//! never run, and carries a [`ReplyCut`] saying which cap cut it.
//!
//! Knows nothing of HTTP or of any API's JSON.

use serde::{Deserialize, Serialize};

/// Default cap on one reply: 8 MiB, far above any real reply (a model's
/// output limit is at most a few hundred thousand tokens, about 1 MiB).
pub const DEFAULT_MAX_REPLY_BYTES: u64 = 8 << 20;

/// What a block costs besides its text: the part and its strings' headers,
/// so a stream of empty blocks is bounded too.
pub const BLOCK_COST: usize = 64;

/// Which cap cut a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cap {
    /// The whole reply: text, reasoning and tool-call arguments together.
    Reply,
    /// One event of the stream (one SSE line, or lines without the blank
    /// line that ends an event).
    Event,
}

/// Why toolhost stopped reading a reply. Recorded with the reply (the
/// session file's `cut`), absent from every reply the server ended itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplyCut {
    pub cap: Cap,
    /// The cap that was passed, in bytes.
    pub limit_bytes: u64,
    /// The reply cap in force (the one setting both caps follow), in bytes.
    pub max_reply_bytes: u64,
}

impl ReplyCut {
    /// What the user reads: the cap, what toolhost did, and how to raise it.
    pub fn notice(&self) -> String {
        let what = match self.cap {
            Cap::Reply => format!(
                "the model's reply passed toolhost's cap of {} (text, reasoning and tool-call \
                 arguments together)",
                size(self.limit_bytes)
            ),
            Cap::Event => format!(
                "one event of the model's stream passed toolhost's cap of {} (twice the reply \
                 cap)",
                size(self.limit_bytes)
            ),
        };
        let raised = (self.max_reply_bytes >> 20).max(1).saturating_mul(2);
        format!(
            "{what}, so toolhost closed the stream and treats the reply as cut by the output \
             limit: its tool calls were not run. A model server that never stops (a local model \
             that misses its stop token) does this; if the replies are meant to be this long, \
             raise the cap with `--max-reply-mib {raised}`, or `max_reply_mib = {raised}` under \
             [model] in your config.toml"
        )
    }
}

/// `bytes` in MiB when whole, else in bytes.
fn size(bytes: u64) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// The bytes one reply may still make toolhost hold.
#[derive(Debug, Clone)]
pub struct ReplyBudget {
    limit: usize,
    used: usize,
    cut: Option<ReplyCut>,
}

impl Default for ReplyBudget {
    fn default() -> Self {
        ReplyBudget::new(DEFAULT_MAX_REPLY_BYTES)
    }
}

impl ReplyBudget {
    /// A budget of `max_reply_bytes` (at least 1).
    pub fn new(max_reply_bytes: u64) -> Self {
        ReplyBudget {
            limit: usize::try_from(max_reply_bytes.max(1)).unwrap_or(usize::MAX),
            used: 0,
            cut: None,
        }
    }

    /// The cap on one event of the stream: twice the reply's (JSON escapes
    /// make an event longer than the text it carries, and some servers send
    /// a whole tool call's arguments in one event), at least 1 MiB.
    pub fn max_event_bytes(&self) -> usize {
        self.limit.saturating_mul(2).max(1 << 20)
    }

    /// The part of `text` that fits: all of it, or its longest prefix that
    /// ends on a character boundary within the budget, after which the
    /// budget is spent and the reply cut. Empty once cut.
    pub fn take<'a>(&mut self, text: &'a str) -> &'a str {
        if self.cut.is_some() {
            return "";
        }
        let room = self.limit - self.used;
        if text.len() <= room {
            self.used += text.len();
            return text;
        }
        let end = text.floor_char_boundary(room);
        self.used += end;
        self.cut_by(Cap::Reply, self.limit);
        &text[..end]
    }

    /// Charges `bytes` kept besides text (a block's cost, an id, a name).
    /// `false` when they do not fit: the reply is cut and the caller keeps
    /// nothing.
    pub fn charge(&mut self, bytes: usize) -> bool {
        if self.cut.is_some() {
            return false;
        }
        if bytes > self.limit - self.used {
            self.cut_by(Cap::Reply, self.limit);
            return false;
        }
        self.used += bytes;
        true
    }

    /// Marks the reply cut because one event passed [`Self::max_event_bytes`].
    pub fn cut_event(&mut self) {
        if self.cut.is_none() {
            self.cut_by(Cap::Event, self.max_event_bytes());
        }
    }

    /// Why the reply was cut, if it was.
    pub fn cut(&self) -> Option<ReplyCut> {
        self.cut
    }

    /// Bytes charged so far.
    pub fn used(&self) -> usize {
        self.used
    }

    fn cut_by(&mut self, cap: Cap, limit: usize) {
        self.cut = Some(ReplyCut {
            cap,
            limit_bytes: limit as u64,
            max_reply_bytes: self.limit as u64,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_under_the_cap_is_kept_whole_and_counted() {
        let mut budget = ReplyBudget::new(10);
        assert_eq!(budget.take("abcd"), "abcd");
        assert_eq!(budget.take("efgh"), "efgh");
        assert_eq!(budget.used(), 8);
        assert_eq!(budget.cut(), None);
        assert_eq!(budget.take("ij"), "ij", "exactly the cap still fits");
        assert_eq!(budget.cut(), None);
    }

    #[test]
    fn a_delta_crossing_the_cap_mid_character_keeps_whole_characters_only() {
        // "é" is 2 bytes, "€" 3: the cap of 6 falls inside the second "€".
        let mut budget = ReplyBudget::new(6);
        assert_eq!(budget.take("é"), "é");
        assert_eq!(budget.take("€€"), "€", "no half character is kept");
        assert_eq!(budget.used(), 5);
        assert_eq!(
            budget.cut(),
            Some(ReplyCut {
                cap: Cap::Reply,
                limit_bytes: 6,
                max_reply_bytes: 6
            })
        );
        assert_eq!(budget.take("a"), "", "nothing is kept once cut");
        assert_eq!(budget.used(), 5);
    }

    #[test]
    fn a_cap_inside_the_first_character_keeps_nothing() {
        let mut budget = ReplyBudget::new(2);
        assert_eq!(budget.take("€"), "");
        assert!(budget.cut().is_some());
    }

    #[test]
    fn charges_for_blocks_count_against_the_same_cap() {
        let mut budget = ReplyBudget::new(BLOCK_COST as u64 * 2 + 3);
        assert!(budget.charge(BLOCK_COST));
        assert!(budget.charge(BLOCK_COST));
        assert_eq!(budget.take("abcdef"), "abc");
        assert!(!budget.charge(1));
        // A charge that does not fit cuts the reply even with room for text.
        let mut budget = ReplyBudget::new(10);
        assert!(!budget.charge(11));
        assert_eq!(budget.take("a"), "");
    }

    #[test]
    fn the_event_cap_is_twice_the_reply_cap_and_at_least_one_mib() {
        assert_eq!(ReplyBudget::default().max_event_bytes(), 16 << 20);
        assert_eq!(ReplyBudget::new(10).max_event_bytes(), 1 << 20);
        let mut budget = ReplyBudget::new(8 << 20);
        budget.cut_event();
        assert_eq!(
            budget.cut().map(|cut| (cut.cap, cut.limit_bytes)),
            Some((Cap::Event, 16 << 20))
        );
    }

    #[test]
    fn the_notice_names_the_cap_and_a_setting_that_raises_it() {
        let mut budget = ReplyBudget::default();
        budget.take(&"x".repeat(9 << 20));
        let notice = budget.cut().expect("cut").notice();
        assert_eq!(
            notice,
            "the model's reply passed toolhost's cap of 8 MiB (text, reasoning and tool-call \
             arguments together), so toolhost closed the stream and treats the reply as cut by \
             the output limit: its tool calls were not run. A model server that never stops (a \
             local model that misses its stop token) does this; if the replies are meant to be \
             this long, raise the cap with `--max-reply-mib 16`, or `max_reply_mib = 16` under \
             [model] in your config.toml"
        );
    }
}
