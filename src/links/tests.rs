use super::*;

#[test]
fn normalise_resolves_dots_and_refuses_climbing_out() {
    assert_eq!(normalise("a/b/../c/./d").as_deref(), Some("a/c/d"));
    assert_eq!(normalise("a/../../x"), None);
}

fn policy(nofollow: bool) -> LinkPolicy {
    let rules = vec![
        AffiliateRule {
            name: "amazon".into(),
            hosts: vec!["amazon.com".into()],
            params: vec!["tag".into()],
            ids: vec![],
        },
        AffiliateRule {
            name: "vast.ai".into(),
            hosts: vec!["vast.ai".into()],
            params: vec!["ref_id".into(), "ref".into()],
            ids: vec![],
        },
        // Short links carry no query: hosts without params.
        AffiliateRule {
            name: "amazon".into(),
            hosts: vec!["amzn.to".into()],
            params: vec![],
            ids: vec![],
        },
        AffiliateRule {
            name: "geniuslink".into(),
            hosts: vec!["geni.us".into()],
            params: vec![],
            ids: vec![],
        },
    ];
    LinkPolicy {
        base: Url::parse("https://site.example/sub/").unwrap(),
        rules,
        nofollow,
    }
}

#[test]
fn classifies_links_as_a_browser_resolves_them() {
    use LinkKind::*;
    let amazon = Affiliate { amazon: true };
    let vast = Affiliate { amazon: false };
    let p = policy(false);
    // (href as the browser has it after entity decoding, rel, kind)
    let table: &[(&str, Option<&str>, LinkKind)] = &[
        ("/sub/oom/", None, Internal),
        ("#root-cause", None, Internal),
        ("?q=1", None, Internal),
        ("mailto:a@b.c", None, Internal),
        ("https://site.example/sub/x/", None, Internal),
        ("HTTPS://SITE.EXAMPLE./x", None, Internal),
        // Same scheme as the base, no slashes: relative to the base.
        ("https:evil.example/x", None, Internal),
        ("https://github.com/x", None, External),
        ("//github.com/x", None, External),
        ("http:github.com/x", None, External),
        ("https:\\\\github.com\\x", None, External),
        ("https:/\\github.com", None, External),
        (" \t\nhttps://github.com/x", None, External),
        ("ht\ttps://github.com/x", None, External),
        ("https://site.example:8443/", None, External),
        ("https://www.amazon.com/s?k=x&tag=a-20", None, amazon),
        (
            "https://www.amazon.com/dp/B0BG9?th=1&tag=mysite-20",
            None,
            amazon,
        ),
        ("https://amazon.com/dp/B0BG9?tag=a&th=1", None, amazon),
        ("https://WWW.AMAZON.COM/dp/x?tag=a", None, amazon),
        ("https://www.amazon.com./dp/x?tag=a", None, amazon),
        ("https://smile.amazon.com/dp/x?tag=a", None, amazon),
        ("https://www.amazon.com/dp/x?%74ag=a", None, amazon),
        ("https://www.amazon.com/dp/x?TAG=a", None, amazon),
        ("https://www.amazon.com/dp/x?a=1&&tag=a#frag", None, amazon),
        ("//www.amazon.com/dp/x?tag=a", None, amazon),
        ("http:www.amazon.com/dp/x?tag=a", None, amazon),
        ("https:\\\\www.amazon.com\\dp?tag=a", None, amazon),
        ("https://www.amazon.com/s?k=x", None, External),
        ("https://www.amazon.com/s?tag=", None, External),
        ("https://www.amazon.com/s#?tag=a", None, External),
        ("https://notamazon.com/?tag=a", None, External),
        ("https://amazon.com.evil.example/?tag=a", None, External),
        ("https://amzn.to/3AbCdEf", None, amazon),
        ("HTTPS://AMZN.TO./3AbCdEf", None, amazon),
        ("//amzn.to/3AbCdEf?x=1", None, amazon),
        ("https://amzn.top/3AbCdEf", None, External),
        ("https://geni.us/abc", None, vast),
        ("https://notgeni.us/abc", None, External),
        ("https://cloud.vast.ai/?ref_id=1", None, vast),
        ("https://vast.ai/?x=1&ref=abc", None, vast),
        ("https://shop.example/x", Some("Sponsored"), vast),
        ("https://shop.example/x", Some("noopener"), External),
    ];
    for (href, rel, kind) in table {
        assert_eq!(p.classify(href, *rel), *kind, "{href}");
    }
}

#[test]
fn entity_encoded_hrefs_decode_before_they_are_classified() {
    let p = policy(false);
    for raw in [
        "https://www.amazon.com/dp/B0BG9?th=1&amp;tag=mysite-20",
        "https://www.amazon.com/dp/B0BG9?th=1&#38;tag=mysite-20",
        "https://www.amazon.com/dp/B0BG9?th=1&#x26;tag=mysite-20",
        "https&colon;//www.amazon.com/dp?tag=x",
    ] {
        let decoded = decode_attribute(raw);
        assert_eq!(
            p.classify(&decoded, None),
            LinkKind::Affiliate { amazon: true },
            "{raw}"
        );
    }
}

#[test]
fn only_web_mail_and_relative_urls_are_allowed() {
    for ok in [
        "/x",
        "x.html",
        "#a",
        "?q",
        "//h.example/",
        "https://h.example/",
        "HTTP://h",
        "mailto:a@b.c",
        "",
        "a/b:c",
    ] {
        assert_eq!(check_url(ok), Ok(()), "{ok}");
    }
    for (bad, scheme) in [
        ("javascript:alert(1)", "javascript"),
        ("JAVASCRIPT:x", "javascript"),
        (" \u{1}javascript:x", "javascript"),
        ("jav\tascript:x", "javascript"),
        ("java\nscript:x", "javascript"),
        ("data:text/html,x", "data"),
        ("vbscript:x", "vbscript"),
        ("file:///etc/passwd", "file"),
        ("tel:123", "tel"),
    ] {
        assert_eq!(check_url(bad), Err(scheme.to_string()), "{bad:?}");
    }
    for (raw, scheme) in [
        ("&#106;avascript:x", "javascript"),
        ("jav&#x09;ascript:x", "javascript"),
        ("javascript&colon;x", "javascript"),
        ("&#x6A;&#x61;vascript:x", "javascript"),
        ("java&Tab;script:x", "javascript"),
        ("&#0000106avascript:x", "javascript"),
    ] {
        assert_eq!(
            check_url(&decode_attribute(raw)),
            Err(scheme.into()),
            "{raw}"
        );
    }
    // Not a reference without `;` in an attribute: stays text, so relative.
    assert_eq!(check_url(&decode_attribute("javascript&colonx")), Ok(()));
    assert_eq!(
        check_url_attribute("srcset", "/a.png 1x, javascript:x 2x"),
        Err("javascript".into())
    );
    assert_eq!(
        check_url_attribute("srcset", "/a.png 1x, /b.png 2x"),
        Ok(())
    );
    assert_eq!(check_url_attribute("ping", "/a data:x"), Err("data".into()));
}

#[test]
fn merges_rel_without_dropping_author_tokens() {
    let p = policy(true);
    let affiliate = LinkKind::Affiliate { amazon: false };
    assert_eq!(p.rel(affiliate, None).unwrap(), "sponsored noopener");
    assert_eq!(
        p.rel(affiliate, Some("noopener sponsored")).unwrap(),
        "noopener sponsored"
    );
    assert_eq!(
        p.rel(affiliate, Some("me")).unwrap(),
        "me sponsored noopener"
    );
    assert_eq!(
        p.rel(LinkKind::External, Some("noreferrer")).unwrap(),
        "noreferrer noopener nofollow"
    );
    assert_eq!(p.rel(LinkKind::Internal, Some("prev")), None);
    assert_eq!(
        policy(false).rel(LinkKind::External, None).unwrap(),
        "noopener"
    );
}

#[test]
fn ids_are_judged_against_the_sites_own() {
    let mut rules = policy(false).rules;
    rules[0].ids = vec!["mine-20".into()];
    let problem = |url: &str| {
        id_problem(&rules, &Url::parse(url).unwrap()).map(|p| match p {
            IdProblem::Foreign { rule, id } => format!("{}: foreign {id}", rule.name),
            IdProblem::Missing { rule } => format!("{}: missing", rule.name),
        })
    };
    // (url as the browser has it, what is wrong)
    let table: &[(&str, Option<&str>)] = &[
        ("https://www.amazon.com/dp/B0?tag=mine-20", None),
        ("https://www.amazon.com/dp/B0?th=1&TAG=mine-20", None),
        // Another site's id, anywhere in the query, on any subdomain.
        (
            "https://www.amazon.com/dp/B0?th=1&tag=other-20",
            Some("amazon: foreign other-20"),
        ),
        (
            "https://smile.amazon.com/dp/B0?tag=%20other-20",
            Some("amazon: foreign other-20"),
        ),
        (
            "https://AMAZON.com./dp/B0?tag=other-20",
            Some("amazon: foreign other-20"),
        ),
        // Ours among several values is ours.
        ("https://amazon.com/dp/B0?tag=other-20&tag=mine-20", None),
        // No id on the shop itself.
        ("https://www.amazon.com/dp/B0", Some("amazon: missing")),
        ("https://amazon.com/dp/B0?tag=", Some("amazon: missing")),
        // Other services under the shop's domain are not shops.
        ("https://aws.amazon.com/ec2/instance-types/g5/", None),
        // Rules without ids, or without params, say nothing.
        ("https://vast.ai/?ref_id=someone", None),
        ("https://amzn.to/3AbCdEf", None),
        ("https://example.com/?tag=other-20", None),
    ];
    for (url, expected) in table {
        assert_eq!(problem(url).as_deref(), *expected, "{url}");
    }
}

#[test]
fn urls_carried_by_refresh_and_animation_are_found() {
    let attrs = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    };
    let carried = |element: &str, pairs: &'static [(&'static str, &'static str)]| {
        carried_urls(element, &attrs(pairs))
            .into_iter()
            .map(|(n, u)| format!("{n}={u}"))
            .collect::<Vec<_>>()
    };
    let refresh = |content: &'static str| -> Vec<String> {
        let pairs: &'static [(&str, &str)] =
            Box::leak(Box::new([("http-equiv", " Refresh"), ("content", content)]));
        carried("META", pairs)
    };
    assert_eq!(
        refresh("0; url=javascript:alert(1)"),
        ["content=javascript:alert(1)"]
    );
    assert_eq!(
        refresh("5,URL = 'data:text/html,x'"),
        ["content=data:text/html,x"]
    );
    assert_eq!(refresh("0;javascript:x"), ["content=javascript:x"]);
    assert_eq!(refresh("3"), ["content="]);
    // Other metas carry text, not URLs.
    assert!(
        carried(
            "meta",
            &[("name", "description"), ("content", "Error: CUDA")]
        )
        .is_empty()
    );
    assert_eq!(
        carried(
            "animate",
            &[("attributeName", "href"), ("values", "#a;javascript:x")]
        ),
        ["values=#a", "values=javascript:x"]
    );
    assert_eq!(
        carried("set", &[("to", "javascript:x")]),
        ["to=javascript:x"]
    );
    assert!(carried("a", &[("to", "javascript:x")]).is_empty());
    for (_, url) in carried_urls("set", &attrs(&[("to", "javascript:x")])) {
        assert!(check_url(&url).is_err());
    }
}

#[test]
fn outbound_links_are_resolved_as_a_browser_resolves_them() {
    let base = Url::parse("https://example.org/docs/").unwrap();
    let out = |url: &str| is_outbound(url).then(|| outbound_url(&base, url)).flatten();
    for (written, goes_to) in [
        (
            "https://www.amazon.com/dp?tag=a",
            "https://www.amazon.com/dp?tag=a",
        ),
        (" HTTPS://Shop.Example/x ", "HTTPS://Shop.Example/x"),
        ("//www.amazon.com/dp/B4", "https://www.amazon.com/dp/B4"),
        ("\\\\www.amazon.com\\dp", "https://www.amazon.com/dp"),
        ("/\\www.amazon.com/dp", "https://www.amazon.com/dp"),
        ("http:www.amazon.com/dp", "http://www.amazon.com/dp"),
        ("https:\\\\www.amazon.com\\dp", "https://www.amazon.com/dp"),
        ("ht\ttps://www.amazon.com/dp", "https://www.amazon.com/dp"),
        // The site's own host written in full is still checked as written.
        (
            "https://example.org/elsewhere",
            "https://example.org/elsewhere",
        ),
    ] {
        assert_eq!(out(written).as_deref(), Some(goes_to), "{written:?}");
    }
    // Relative links, other schemes, and `https:` without a host under an
    // `https` site (a path of this site) do not leave.
    for stays in [
        "/oom/x/",
        "page/",
        "#a",
        "mailto:a@b.c",
        "https:page",
        "ftp://x.example/",
        "/x//y",
    ] {
        assert_eq!(out(stays), None, "{stays:?}");
    }
}
