//! The site's own affiliate ids (`ids` on a `[[links.affiliate]]` rule):
//! `errata check` warns about a link that carries someone else's id, and
//! about a link to a shop that carries no id at all. Both earn the site
//! nothing, and neither is visible on the rendered page.

use url::Url;

use crate::config::Config;
use crate::diagnostics::Diagnostic;
use crate::external::UrlSite;
use crate::links::{IdProblem, id_problem};

/// One warning per outbound link in `sites` whose id is not the site's.
pub fn id_warnings(config: &Config, sites: &[UrlSite]) -> Vec<Diagnostic> {
    sites
        .iter()
        .filter_map(|site| {
            let url = Url::parse(site.url.trim()).ok()?;
            let problem = id_problem(&config.affiliate, &url)?;
            Some(warning(site, &problem))
        })
        .collect()
}

fn warning(site: &UrlSite, problem: &IdProblem<'_>) -> Diagnostic {
    let (rule, message, code) = match problem {
        IdProblem::Foreign { rule, id } => (
            rule,
            format!(
                "affiliate link carries the id `{id}`, which is not one of this site's `{}` ids",
                rule.name
            ),
            "affiliate-foreign-id",
        ),
        IdProblem::Missing { rule } => (
            rule,
            format!(
                "link to `{}` carries no affiliate id (`{}`): it earns nothing",
                rule.name,
                rule.params.join("`, `")
            ),
            "affiliate-missing-id",
        ),
    };
    let ids = rule
        .ids
        .iter()
        .map(|id| format!("`{}={id}`", rule.params[0]))
        .collect::<Vec<_>>()
        .join(" or ");
    Diagnostic::warning(site.path.clone(), site.line, site.col, message)
        .with_code(code)
        .with_help(format!("use this site's id: {ids}"))
}
