//! kube-apiserver's rules for names and labels, and Go's formatting of the
//! values its messages print: one implementation for the host and every
//! plugin, so each message reads byte for byte as kube's.
//!
//! - At the root (from [`validation`]): `k8s.io/apimachinery/pkg/util/validation`'s
//!   `Is*` checks (DNS-1123 labels and subdomains, DNS-1035 labels, wildcard
//!   subdomains, qualified names, label values, ConfigMap keys, port names and
//!   numbers, percents), `path.IsValidPathSegmentName`, the `NameIs*` name
//!   functions with `generateName` prefixes, and the message builders
//!   (`MaxLenError`, `RegexError`, `InclusiveRangeError`, `EmptyError`). Each
//!   check returns kube's messages, empty when the value is valid.
//! - [`gofmt`]: Go's `%q` (`strconv.Quote`), `%q` of a `[]string`, `%v` and
//!   `%#v` of decoded JSON and of the typed values kube prints (label maps,
//!   string slices, label selectors), a field error's bad value,
//!   `utilerrors.Aggregate`'s text and `encoding/json`'s output.

pub mod gofmt;
pub mod validation;

pub use validation::*;
