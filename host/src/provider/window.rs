//! What a server says about the model's context window, asked once at the
//! start of a run where it tells: vLLM's `GET /v1/models` (`max_model_len`
//! of the model), llama.cpp's `GET /props` (`n_ctx`). Only a server on this
//! machine is asked (two quick requests there; at a remote server, two
//! round trips before every run). The vendors' own APIs
//! do not say (their windows are in their docs, so `[model]
//! context_window`); Ollama's OpenAI endpoint neither, and it cuts a
//! prompt that does not fit without an error (see `agent::context`).

use std::time::Duration;

use serde_json::Value;

use super::Model;

/// How long a server gets to answer: it is on this machine or next to it.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The window the server reports for the model, if it reports one.
pub async fn probe(model: &Model) -> Option<u64> {
    let Model::OpenAi(client) = model else {
        return None;
    };
    let http = client.http();
    if http.is_vendor() || !super::http::is_loopback_url(http.base_url()) {
        return None;
    }
    if let Some(models) = http.get_json(&http.url("models"), PROBE_TIMEOUT).await
        && let Some(window) = vllm_window(&models, http.model())
    {
        return Some(window);
    }
    // llama.cpp answers /props at the server's root, beside /v1.
    let root = http.base_url().trim_end_matches('/');
    let root = root.strip_suffix("/v1").unwrap_or(root);
    let props = http
        .get_json(&format!("{root}/props"), PROBE_TIMEOUT)
        .await?;
    llama_cpp_window(&props)
}

/// vLLM's model list: `data[]` with `id` and `max_model_len`.
fn vllm_window(models: &Value, name: &str) -> Option<u64> {
    models["data"]
        .as_array()?
        .iter()
        .find(|entry| entry["id"] == name)?
        .get("max_model_len")?
        .as_u64()
        .filter(|&n| n > 0)
}

/// llama.cpp's server properties: `default_generation_settings.n_ctx`
/// (older servers: `n_ctx` at the top).
fn llama_cpp_window(props: &Value) -> Option<u64> {
    props
        .pointer("/default_generation_settings/n_ctx")
        .or_else(|| props.get("n_ctx"))?
        .as_u64()
        .filter(|&n| n > 0)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn vllm_names_the_window_of_the_model_asked_for() {
        let models = json!({"object": "list", "data": [
            {"id": "other", "object": "model", "max_model_len": 8192},
            {"id": "Qwen/Qwen2.5-Coder-7B-Instruct", "object": "model", "owned_by": "vllm",
             "root": "Qwen/Qwen2.5-Coder-7B-Instruct", "parent": null, "max_model_len": 32768},
        ]});
        assert_eq!(
            vllm_window(&models, "Qwen/Qwen2.5-Coder-7B-Instruct"),
            Some(32768)
        );
        assert_eq!(vllm_window(&models, "missing"), None);
        // OpenAI's own list says nothing of windows.
        let openai = json!({"object": "list", "data": [{"id": "gpt-4o", "object": "model"}]});
        assert_eq!(vllm_window(&openai, "gpt-4o"), None);
    }

    #[test]
    fn llama_cpp_names_its_context_size() {
        let props = json!({"default_generation_settings": {"n_ctx": 4096, "params": {}},
                           "total_slots": 1, "model_path": "m.gguf"});
        assert_eq!(llama_cpp_window(&props), Some(4096));
        assert_eq!(llama_cpp_window(&json!({"n_ctx": 2048})), Some(2048));
        assert_eq!(llama_cpp_window(&json!({"n_ctx": 0})), None);
        assert_eq!(llama_cpp_window(&json!({})), None);
    }
}
