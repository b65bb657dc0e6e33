//! What a response becomes for the model: its kind from the content type
//! (HTML, other text, or not text at all), HTML's article as Markdown or
//! text, and one page of the result at a time.
//!
//! HTML goes through a readability pass (dom_smoothie, a port of Firefox's
//! reader view), which keeps the article and drops navigation, ads and
//! scripts; a page it finds no article in is converted whole by a plain
//! HTML-to-Markdown serializer (dom_query's), without its scripts and
//! styles. Other text (JSON, plain text, XML) passes through as it came.

use dom_smoothie::{Config, Readability, TextMode};

/// How the model wants the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// HTML as Markdown (the default): headings, links, lists and code kept.
    Markdown,
    /// HTML as plain text.
    Text,
    /// The body as it came, HTML included.
    Raw,
}

/// Elements a plain conversion leaves out: none of them is text to read.
const NOT_TEXT: &[&str] = &[
    "head", "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object",
];

/// Elements the readability pass looks at, at most: a larger page is
/// converted plainly (its cost grows with the page; fuel bounds both).
const MAX_ELEMENTS: usize = 100_000;

/// A page's readable content: its title, if it has one, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub title: Option<String>,
    pub text: String,
}

/// Turns a response body of `content_type`, fetched from `url`, into what
/// the model reads in `format`; `Err` for a body that is not text.
pub fn render(
    body: &[u8],
    content_type: Option<&str>,
    url: &str,
    format: Format,
) -> Result<Rendered, String> {
    let kind = Kind::of(content_type, body);
    if kind == Kind::Binary {
        return Err(format!(
            "the response is `{}`, not text; fetch returns text only (HTML, JSON, plain text)",
            content_type.unwrap_or("of no content type")
        ));
    }
    let text = String::from_utf8_lossy(body);
    if format == Format::Raw || kind == Kind::Text {
        return Ok(Rendered {
            title: None,
            text: text.into_owned(),
        });
    }
    Ok(html(&text, url, format))
}

/// HTML's article, or the whole page when it has none.
fn html(html: &str, url: &str, format: Format) -> Rendered {
    let config = Config {
        text_mode: if format == Format::Text {
            TextMode::Formatted
        } else {
            TextMode::Markdown
        },
        max_elements_to_parse: MAX_ELEMENTS,
        ..Config::default()
    };
    let article = Readability::new(html, Some(url), Some(config))
        .or_else(|_| Readability::new(html, None, None))
        .and_then(|mut readability| readability.parse());
    if let Ok(article) = article
        && !article.text_content.trim().is_empty()
    {
        let title = article.title.trim();
        return Rendered {
            title: (!title.is_empty()).then(|| title.to_string()),
            text: tidy(&article.text_content),
        };
    }
    let document = dom_query::Document::from(html);
    let title = document.select("title").text().trim().to_string();
    let text = match format {
        Format::Text => document.select("body").text().to_string(),
        _ => document.md(Some(NOT_TEXT)).to_string(),
    };
    Rendered {
        title: (!title.is_empty()).then_some(title),
        text: tidy(&text),
    }
}

/// Trailing spaces dropped and runs of blank lines made one.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.trim().lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
    Binary,
}

impl Kind {
    /// From the content type; without one, from the body.
    fn of(content_type: Option<&str>, body: &[u8]) -> Kind {
        let Some(content_type) = content_type else {
            let head = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
            let head = head.trim_start();
            return if head.starts_with("<!doctype html") || head.starts_with("<html") {
                Kind::Html
            } else if std::str::from_utf8(&body[..body.len().min(4096)]).is_ok() {
                Kind::Text
            } else {
                Kind::Binary
            };
        };
        let essence = content_type
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        match essence.as_str() {
            "text/html" | "application/xhtml+xml" => Kind::Html,
            "application/json"
            | "application/xml"
            | "application/javascript"
            | "application/x-ndjson"
            | "application/yaml"
            | "application/toml" => Kind::Text,
            _ if essence.starts_with("text/")
                || essence.ends_with("+json")
                || essence.ends_with("+xml") =>
            {
                Kind::Text
            }
            _ => Kind::Binary,
        }
    }
}

/// `rendered` as one page: the title as a heading, then the text, from
/// character `start` for at most `max` characters; when cut, it ends with
/// the `start_index` that reads on.
pub fn page(rendered: &Rendered, start: usize, max: usize) -> Result<String, String> {
    let whole = match &rendered.title {
        Some(title) => format!("# {title}\n\n{}", rendered.text),
        None => rendered.text.clone(),
    };
    let total = whole.chars().count();
    if start > 0 && start >= total {
        return Err(format!(
            "start_index {start} is past the end of the content ({total} characters); ask \
             with a smaller start_index"
        ));
    }
    let byte_at = |chars: usize| {
        whole
            .char_indices()
            .nth(chars)
            .map_or(whole.len(), |(at, _)| at)
    };
    let from = byte_at(start);
    let end = start.saturating_add(max).min(total);
    let to = from
        + whole[from..]
            .char_indices()
            .nth(end - start)
            .map_or(whole.len() - from, |(at, _)| at);
    let mut shown = whole[from..to].to_string();
    if end < total {
        shown.push_str(&format!(
            "\n\n[Cut at character {end} of {total}. Call fetch again with start_index={end} to \
             read on.]"
        ));
    }
    Ok(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARTICLE: &str = r#"<!doctype html><html><head><title>How the tides work | Coast News</title>
        <script>track()</script><style>p{}</style></head><body>
        <nav><a href="/">Home</a> <a href="/about">About</a></nav>
        <article><h1>How the tides work</h1>
        <p>The tide rises and falls twice a day because the Moon pulls the oceans toward it. The
        effect is strongest when the Sun and the Moon line up, at new and full moon, which gives
        the spring tides that flood the harbour each month.</p>
        <p>Between them come the neap tides, when the two pull at right angles and the water
        barely moves. Harbour masters publish tables of both, and <a href="/tables">the
        tables</a> list every high water for the year ahead.</p>
        <h2>Reading a table</h2>
        <ul><li>Times are local.</li><li>Heights are in metres above chart datum.</li></ul>
        <p>Most tables also give the range, which is the difference between high and low water
        on the same day; a large range means strong currents in narrow channels.</p>
        </article><footer>Copyright Coast News</footer></body></html>"#;

    #[test]
    fn an_article_comes_back_as_markdown_without_the_page_around_it() {
        let rendered = render(
            ARTICLE.as_bytes(),
            Some("text/html; charset=utf-8"),
            "https://news.test/tides",
            Format::Markdown,
        )
        .expect("html");
        assert_eq!(
            rendered.title.as_deref(),
            Some("How the tides work | Coast News")
        );
        assert_eq!(
            rendered.text,
            "The tide rises and falls twice a day because the Moon pulls the oceans toward it. \
             The effect is strongest when the Sun and the Moon line up, at new and full moon, \
             which gives the spring tides that flood the harbour each month.\n\n\
             Between them come the neap tides, when the two pull at right angles and the water \
             barely moves. Harbour masters publish tables of both, and [the \
             tables](https://news.test/tables) list every high water for the year ahead.\n\n\
             ## Reading a table\n\n\
             - Times are local.\n\
             - Heights are in metres above chart datum.\n\n\
             Most tables also give the range, which is the difference between high and low water \
             on the same day; a large range means strong currents in narrow channels.\n"
        );
    }

    #[test]
    fn a_page_without_an_article_is_converted_whole() {
        let html = "<html><head><title>Links</title><script>x()</script></head><body>\
                    <h1>Links</h1><p><a href=\"https://a.test/\">A</a></p></body></html>";
        let rendered = render(
            html.as_bytes(),
            Some("text/html"),
            "https://l.test/",
            Format::Markdown,
        )
        .expect("html");
        assert_eq!(rendered.title.as_deref(), Some("Links"));
        assert!(
            rendered.text.contains("[A](https://a.test/)"),
            "{}",
            rendered.text
        );
        assert!(!rendered.text.contains("x()"), "{}", rendered.text);
    }

    #[test]
    fn other_text_passes_through_and_binary_is_refused() {
        let json = br#"{"a": [1, 2]}"#;
        assert_eq!(
            render(
                json,
                Some("application/json"),
                "https://j.test/",
                Format::Markdown
            ),
            Ok(Rendered {
                title: None,
                text: r#"{"a": [1, 2]}"#.into()
            })
        );
        assert_eq!(
            render(
                b"\x89PNG\r\n\x1a\n\0\0",
                Some("image/png"),
                "https://i.test/",
                Format::Markdown
            ),
            Err(
                "the response is `image/png`, not text; fetch returns text only (HTML, JSON, \
                 plain text)"
                    .into()
            )
        );
        let raw = render(
            ARTICLE.as_bytes(),
            Some("text/html"),
            "https://n.test/",
            Format::Raw,
        )
        .expect("raw");
        assert_eq!(raw.text, ARTICLE);
    }

    #[test]
    fn pages_are_counted_in_characters_and_say_how_to_read_on() {
        let rendered = Rendered {
            title: Some("Ä".into()),
            text: "ééééé".into(),
        };
        // "# Ä\n\néééééé" is 10 characters.
        assert_eq!(
            page(&rendered, 0, 6),
            Ok(
                "# Ä\n\né\n\n[Cut at character 6 of 10. Call fetch again with start_index=6 \
                to read on.]"
                    .into()
            )
        );
        assert_eq!(page(&rendered, 6, 6), Ok("éééé".into()));
        assert!(page(&rendered, 10, 6).is_err());
        assert_eq!(
            page(
                &Rendered {
                    title: None,
                    text: String::new()
                },
                0,
                6
            ),
            Ok(String::new())
        );
    }
}
