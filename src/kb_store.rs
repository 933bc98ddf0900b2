//! The knowledge base's storage in localStorage: load (a corrupt store is set aside under
//! `STORE_KEY.corrupt`, and the user is told) and save. The knowledge-base view and the run's
//! warm start both use it, so the storage lives apart from any view.

use crate::browser;
use crate::state::Ctx;
use tunelab_scenario::knowledge::KnowledgeBase;

/// localStorage key of the base; a corrupt store is moved to `STORE_KEY.corrupt`.
pub const STORE_KEY: &str = "tunelab.kb";

/// Loads the base, setting a corrupt store aside (and saying so).
pub fn load(ctx: Ctx) -> KnowledgeBase {
    let text = match browser::storage_get(STORE_KEY) {
        Ok(Some(t)) => t,
        Ok(None) => return KnowledgeBase::new(),
        Err(e) => {
            ctx.fail(format!("The knowledge base is unavailable: {e}"));
            return KnowledgeBase::new();
        }
    };
    let loaded = KnowledgeBase::load(&text);
    if let Some((why, original)) = loaded.set_aside {
        let _ = browser::storage_set(&format!("{STORE_KEY}.corrupt"), &original);
        let _ = browser::storage_set(STORE_KEY, &KnowledgeBase::new().to_json());
        ctx.fail(format!("The stored knowledge base was unreadable ({why}); it was set aside under '{STORE_KEY}.corrupt' and a new one started."));
    }
    loaded.kb
}

/// Saves the base (a full or unavailable storage is reported, never a panic).
pub fn save(ctx: Ctx, kb: &KnowledgeBase) {
    if let Err(e) = browser::storage_set(STORE_KEY, &kb.to_json()) {
        ctx.fail(format!("The knowledge base could not be saved: {e}"));
    }
}
