//! What tokens cost, when the user says (`[model.prices]`): the figure the
//! front ends show beside the token counts, and what a run's cost budget
//! counts.

use serde::{Deserialize, Deserializer, Serialize};

use super::TokenTotals;

/// US dollars per million tokens. Cache reads and writes cost as `input`
/// unless given: Anthropic bills reads at a tenth of it and writes at a
/// quarter more; OpenAI reads at a half or a tenth, by model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prices {
    #[serde(deserialize_with = "price")]
    pub input: f64,
    #[serde(deserialize_with = "price")]
    pub output: f64,
    #[serde(
        default,
        deserialize_with = "some_price",
        skip_serializing_if = "Option::is_none"
    )]
    pub cache_read: Option<f64>,
    #[serde(
        default,
        deserialize_with = "some_price",
        skip_serializing_if = "Option::is_none"
    )]
    pub cache_write: Option<f64>,
}

impl Prices {
    /// What `tokens` cost, in dollars.
    pub fn cost(&self, tokens: &TokenTotals) -> f64 {
        let at = |count: u64, per_million: f64| count as f64 * per_million / 1_000_000.0;
        at(tokens.input_tokens, self.input)
            + at(
                tokens.cache_read_tokens,
                self.cache_read.unwrap_or(self.input),
            )
            + at(
                tokens.cache_write_tokens,
                self.cache_write.unwrap_or(self.input),
            )
            + at(tokens.output_tokens, self.output)
    }

    /// What `tokens` of prompt cost at the full price, in dollars.
    pub fn prompt_cost(&self, tokens: u64) -> f64 {
        tokens as f64 * self.input / 1_000_000.0
    }

    /// Each price the higher of the two: what a file the user does not
    /// trust may do to the user's prices (raise them, so a cost budget only
    /// stops sooner).
    pub fn at_least(self, other: Prices) -> Prices {
        let higher = |a: Option<f64>, b: Option<f64>, fallback_a: f64, fallback_b: f64| {
            Some(a.unwrap_or(fallback_a).max(b.unwrap_or(fallback_b)))
        };
        Prices {
            input: self.input.max(other.input),
            output: self.output.max(other.output),
            cache_read: higher(self.cache_read, other.cache_read, self.input, other.input),
            cache_write: higher(self.cache_write, other.cache_write, self.input, other.input),
        }
    }
}

/// What a run may spend, and at what prices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostBudget {
    pub dollars: f64,
    pub prices: Prices,
}

/// `$0.0123` below a dollar, `$4.56` from one on.
pub fn dollars(amount: f64) -> String {
    if amount < 1.0 {
        format!("${amount:.4}")
    } else {
        format!("${amount:.2}")
    }
}

/// The tokens, and their cost when the prices are known: `70 in / 15 out
/// tokens · $0.0012`.
pub fn spent(tokens: &TokenTotals, prices: Option<&Prices>) -> String {
    match prices {
        Some(prices) => format!("{tokens} · {}", dollars(prices.cost(tokens))),
        None => tokens.to_string(),
    }
}

/// A price: a number, not negative.
fn price<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    let value = f64::deserialize(deserializer)?;
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(serde::de::Error::custom(format!(
            "a price is US dollars per million tokens, 0 or more; {value} is not"
        )))
    }
}

fn some_price<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<f64>, D::Error> {
    price(deserializer).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prices(input: f64, output: f64, read: Option<f64>, write: Option<f64>) -> Prices {
        Prices {
            input,
            output,
            cache_read: read,
            cache_write: write,
        }
    }

    #[test]
    fn each_count_is_charged_at_its_price_and_caches_default_to_input() {
        let tokens = TokenTotals {
            input_tokens: 1_000_000,
            cache_read_tokens: 2_000_000,
            cache_write_tokens: 1_000_000,
            output_tokens: 100_000,
        };
        let sonnet = prices(3.0, 15.0, Some(0.3), Some(3.75));
        assert!((sonnet.cost(&tokens) - (3.0 + 0.6 + 3.75 + 1.5)).abs() < 1e-9);
        let plain = prices(3.0, 15.0, None, None);
        assert!((plain.cost(&tokens) - (3.0 + 6.0 + 3.0 + 1.5)).abs() < 1e-9);
        assert_eq!(
            spent(&tokens, Some(&sonnet)),
            "1000000 in + 2000000 cache read + 1000000 cache write / 100000 out tokens · $8.85"
        );
        assert_eq!(dollars(0.012_34), "$0.0123");
    }

    #[test]
    fn a_file_not_trusted_only_raises_prices() {
        let user = prices(3.0, 15.0, Some(0.3), None);
        let lower = prices(0.0, 0.0, Some(0.0), Some(0.0));
        assert_eq!(
            user.at_least(lower),
            prices(3.0, 15.0, Some(0.3), Some(3.0))
        );
        let higher = prices(5.0, 20.0, None, None);
        assert_eq!(
            user.at_least(higher),
            prices(5.0, 20.0, Some(5.0), Some(5.0))
        );
    }

    #[test]
    fn a_negative_price_is_refused() {
        let parsed: Result<Prices, _> = toml::from_str("input = -1\noutput = 2\n");
        let error = parsed.expect_err("refused").to_string();
        assert!(error.contains("0 or more; -1 is not"), "{error}");
    }
}
