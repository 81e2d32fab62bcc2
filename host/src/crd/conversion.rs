//! Conversion of custom resources between the versions of their CRD (in progress).
