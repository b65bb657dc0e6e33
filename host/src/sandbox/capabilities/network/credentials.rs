//! Headers the host adds to a tool's requests, for credentials the guest
//! must never see (`[tools.github.headers."https://api.github.com"]
//! Authorization = "Bearer ${GITHUB_TOKEN}"`): added after the request is
//! cleared, only when its destination matches the header's pattern, so a
//! redirect elsewhere (a new request) goes without them. The values are
//! marked sensitive and appear in no record or message.

use http::{HeaderName, HeaderValue};

use super::grant::{Destination, NetGrant};

/// One header for the requests that match `to`.
#[derive(Clone, PartialEq, Eq)]
pub struct Credential {
    pub to: NetGrant,
    pub name: HeaderName,
    pub value: HeaderValue,
}

impl Credential {
    /// A header `name: value` for requests matching `to`; `Err` names what
    /// is not a valid header.
    pub fn new(to: NetGrant, name: &str, value: &str) -> Result<Credential, String> {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("`{name}` is not a valid header name"))?;
        let mut value = HeaderValue::from_str(value)
            .map_err(|_| format!("the value of `{name}` is not a valid header value"))?;
        value.set_sensitive(true);
        Ok(Credential { to, name, value })
    }
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Credential({} for {}: <redacted>)", self.name, self.to)
    }
}

/// Adds to `headers` every credential whose pattern matches `to`,
/// replacing any the guest set under the same names.
pub(crate) fn add(credentials: &[Credential], to: &Destination, headers: &mut http::HeaderMap) {
    for credential in credentials.iter().filter(|c| c.to.matches(to)) {
        headers.insert(credential.name.clone(), credential.value.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_credential_goes_only_where_its_pattern_matches_and_never_shows() {
        let token = Credential::new(
            NetGrant::parse("https://api.example.test").expect("grant"),
            "Authorization",
            "Bearer s3cret",
        )
        .expect("credential");
        assert!(!format!("{token:?}").contains("s3cret"));
        let mut headers = http::HeaderMap::new();
        headers.insert("authorization", HeaderValue::from_static("guest's own"));
        let to = |url: &str| Destination::of_url(url).expect("url");
        add(
            std::slice::from_ref(&token),
            &to("https://evil.test/"),
            &mut headers,
        );
        assert_eq!(headers["authorization"], "guest's own");
        add(
            std::slice::from_ref(&token),
            &to("http://api.example.test/"),
            &mut headers,
        );
        assert_eq!(headers["authorization"], "guest's own");
        add(
            std::slice::from_ref(&token),
            &to("https://api.example.test/x"),
            &mut headers,
        );
        assert_eq!(headers["authorization"], "Bearer s3cret");
        assert!(headers["authorization"].is_sensitive());
        assert!(Credential::new(token.to.clone(), "bad name", "x").is_err());
        assert!(Credential::new(token.to.clone(), "X-Key", "line\nbreak").is_err());
    }
}
