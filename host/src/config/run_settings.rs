//! The `[chat]` and `[run]` sections: settings none of which widens
//! access, so any file may set them.

use super::file::ChatSection;
use super::source::Source;

/// The `[chat]` keys: the workspace's over the user's.
pub(super) fn merged_chat(sources: &[Source]) -> ChatSection {
    let mut chat = ChatSection::default();
    for source in sources {
        if source.file.chat.delivery.is_some() {
            chat.delivery = source.file.chat.delivery;
        }
    }
    chat
}

/// `[run] max_tokens_total`: the lowest any file gives (a budget only
/// stops a run sooner, so a workspace's may lower the user's).
pub(super) fn max_tokens_total(sources: &[Source]) -> Option<u64> {
    sources
        .iter()
        .filter_map(|source| source.file.run.max_tokens_total)
        .map(std::num::NonZeroU64::get)
        .min()
}

/// `[run] max_cost`, in dollars: the lowest any file gives.
pub(super) fn max_cost(sources: &[Source]) -> Option<f64> {
    sources
        .iter()
        .filter_map(|source| source.file.run.max_cost)
        .reduce(f64::min)
}
