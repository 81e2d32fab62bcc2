//! `capstan serve --controllers`: which of Capstan's controllers that do
//! kube-controller-manager's work run, in kube-controller-manager's own
//! syntax (`*` every one, `name` one, `-name` not that one; its names and
//! their aliases). The controllers kube-apiserver itself runs (bootstrap
//! objects, CRD names and cleanup, APIServices, API priority and fairness)
//! are not selectable: they always run, as in kube-apiserver.

use std::collections::BTreeSet;

/// Capstan's controllers that kube-controller-manager also runs: the name
/// it gives each and the alias it accepts.
pub const KNOWN: [(&str, &str); 10] = [
    ("namespace-controller", "namespace"),
    ("serviceaccount-controller", "serviceaccount"),
    (
        "root-ca-certificate-publisher-controller",
        "root-ca-cert-publisher",
    ),
    ("certificatesigningrequest-signing-controller", "csrsigning"),
    (
        "clusterrole-aggregation-controller",
        "clusterrole-aggregation",
    ),
    ("resourcequota-controller", "resourcequota"),
    (
        "persistentvolumeclaim-protection-controller",
        "pvc-protection",
    ),
    ("persistentvolume-protection-controller", "pv-protection"),
    ("garbage-collector-controller", "garbagecollector"),
    (
        "validatingadmissionpolicy-status-controller",
        "validatingadmissionpolicy-status",
    ),
];

/// The enabled controllers, by kube-controller-manager's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    enabled: BTreeSet<&'static str>,
}

impl Default for Selection {
    /// `*`: every one.
    fn default() -> Self {
        Selection {
            enabled: KNOWN.iter().map(|(name, _)| *name).collect(),
        }
    }
}

impl Selection {
    /// Reads the flag's list as kube-controller-manager's
    /// `IsControllerEnabled` does: the first entry naming a controller
    /// (itself or with `-`) decides, else `*` enables it. An empty list
    /// enables none.
    pub fn parse(entries: &[String]) -> Result<Selection, String> {
        let entries: Vec<&str> = entries.iter().map(|e| e.trim()).collect();
        for entry in &entries {
            let name = entry.strip_prefix('-').unwrap_or(entry);
            if !entry.is_empty() && name != "*" && canonical(name).is_none() {
                return Err(format!(
                    "{name:?} is not in the list of known controllers: {}",
                    KNOWN.map(|(n, _)| n).join(", ")
                ));
            }
        }
        let enabled = KNOWN
            .iter()
            .map(|(name, _)| *name)
            .filter(|name| is_enabled(name, &entries))
            .collect();
        Ok(Selection { enabled })
    }

    pub fn is_enabled(&self, name: &str) -> bool {
        self.enabled.contains(name)
    }

    pub fn enabled(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.enabled.iter().copied()
    }
}

/// kube-controller-manager's name of `name` (itself or its alias).
fn canonical(name: &str) -> Option<&'static str> {
    KNOWN
        .iter()
        .find(|(n, alias)| *n == name || *alias == name)
        .map(|(n, _)| *n)
}

fn is_enabled(name: &str, entries: &[&str]) -> bool {
    let mut star = false;
    for entry in entries {
        match entry.strip_prefix('-') {
            Some(off) if canonical(off) == Some(name) => return false,
            None if canonical(entry) == Some(name) => return true,
            None if *entry == "*" => star = true,
            _ => {}
        }
    }
    star
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(list: &[&str]) -> Result<Selection, String> {
        Selection::parse(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn star_enables_every_controller_and_minus_takes_one_out() {
        let all = parse(&["*"]).unwrap();
        assert_eq!(all, Selection::default());
        let some = parse(&["*", "-garbagecollector", "-namespace-controller"]).unwrap();
        assert!(!some.is_enabled("garbage-collector-controller"));
        assert!(!some.is_enabled("namespace-controller"));
        assert!(some.is_enabled("serviceaccount-controller"));
    }

    #[test]
    fn without_a_star_only_the_named_ones_run() {
        let one = parse(&["csrsigning"]).unwrap();
        let names: Vec<_> = one.enabled().collect();
        assert_eq!(names, ["certificatesigningrequest-signing-controller"]);
        assert_eq!(parse(&[""]).unwrap().enabled().count(), 0);
    }

    #[test]
    fn the_first_entry_naming_a_controller_decides() {
        let s = parse(&["-namespace", "namespace", "*"]).unwrap();
        assert!(!s.is_enabled("namespace-controller"));
        assert!(s.is_enabled("resourcequota-controller"));
    }

    #[test]
    fn an_unknown_name_is_refused_as_kube_controller_manager_refuses_it() {
        let e = parse(&["*", "-deployment-controller"]).unwrap_err();
        assert!(
            e.starts_with("\"deployment-controller\" is not in the list of known controllers"),
            "{e}"
        );
    }
}
