//! Capstan's guest SDK: write Capstan plugins (admission, authenticator,
//! authorizer, strategy, converter) in Rust and build them as WebAssembly components
//! for `wasm32-wasip2` against the `capstan:plugin@0.1.0` WIT package.
//!
//! ```ignore
//! use capstan_plugin_sdk::{AdmissionPlugin, AdmissionRequest, AdmissionResponse};
//! struct MyPlugin;
//! impl AdmissionPlugin for MyPlugin {
//!     fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
//!         Ok(AdmissionResponse::allow())
//!     }
//! }
//! capstan_plugin_sdk::admission_plugin!(MyPlugin);
//! ```
//!
//! The same code compiles natively, where [`host`] reads the test double in
//! [`testing`], so plugin logic is tested with a plain `cargo test`.

pub mod access;
#[cfg(target_arch = "wasm32")]
pub mod bindings;
pub mod conversion;
pub mod host;
pub mod object;
pub mod patch;
pub mod plugin;
pub mod remembered;
pub mod response;
pub mod review;
pub mod strategy;
#[cfg(not(target_arch = "wasm32"))]
pub mod testing;

pub use access::{
    SubjectAccessReview, SubjectAccessReviewStatus, SubjectRulesReview, SubjectRulesReviewStatus,
    TokenReview, TokenReviewStatus,
};
pub use conversion::{ConversionRequest, ConversionResponse, ConversionReview};
pub use patch::{JsonPatch, PatchOp};
pub use plugin::{
    run_admission, run_authenticator, run_authorizer, run_converter, run_strategy, AdmissionPlugin,
    AuthenticatorPlugin, AuthorizerPlugin, ConverterPlugin, StrategyPlugin,
};
pub use remembered::Remembered;
pub use response::{AdmissionResponse, Status, StatusCause, StatusDetails};
pub use review::{AdmissionRequest, AdmissionReview, Operation, UserInfo};
pub use serde_json::{json, Value};
pub use strategy::{Cause, Phase, StrategyAnswer, StrategyCall, StrategyResource};

/// Declares the component export of one world for `$plugin`, which must
/// implement `$trait`; `$dispatch` is the SDK function that speaks JSON.
/// Natively it only checks that the trait is implemented.
#[doc(hidden)]
#[macro_export]
macro_rules! __capstan_export {
    ($plugin:ty, $trait:ident, $world:ident, $func:ident, $arg:ident, $dispatch:ident) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct CapstanExport;
            impl $crate::bindings::$world::Guest for CapstanExport {
                fn $func(
                    $arg: ::std::string::String,
                ) -> ::core::result::Result<::std::string::String, ::std::string::String> {
                    $crate::$dispatch::<$plugin>(&$arg)
                }
            }
    $crate::bindings::$world::export!(CapstanExport with_types_in $crate::bindings::$world);
        };
        #[cfg(not(target_arch = "wasm32"))]
        const _: fn() = || {
            fn implements<P: $crate::$trait>() {}
            implements::<$plugin>();
        };
    };
}

/// Exports `$plugin` (an [`AdmissionPlugin`]) as the `admission` world's `review`.
#[macro_export]
macro_rules! admission_plugin {
    ($plugin:ty) => {
        $crate::__capstan_export!(
            $plugin,
            AdmissionPlugin,
            admission,
            review,
            admission_review,
            run_admission
        );
    };
}

/// Exports `$plugin` (an [`AuthenticatorPlugin`]) as the `authenticator` world's `authenticate`.
#[macro_export]
macro_rules! authenticator_plugin {
    ($plugin:ty) => {
        $crate::__capstan_export!(
            $plugin,
            AuthenticatorPlugin,
            authenticator,
            authenticate,
            token_review,
            run_authenticator
        );
    };
}

/// Exports `$plugin` (an [`AuthorizerPlugin`]) as the `authorizer` world's `authorize`.
#[macro_export]
macro_rules! authorizer_plugin {
    ($plugin:ty) => {
        $crate::__capstan_export!(
            $plugin,
            AuthorizerPlugin,
            authorizer,
            authorize,
            subject_access_review,
            run_authorizer
        );
    };
}

/// Exports `$plugin` (a [`StrategyPlugin`]) as the `strategy` world's `call`.
#[macro_export]
macro_rules! strategy_plugin {
    ($plugin:ty) => {
        $crate::__capstan_export!(
            $plugin,
            StrategyPlugin,
            strategy,
            call,
            strategy_call,
            run_strategy
        );
    };
}

/// Exports `$plugin` (a [`ConverterPlugin`]) as the `converter` world's `convert`.
#[macro_export]
macro_rules! converter_plugin {
    ($plugin:ty) => {
        $crate::__capstan_export!(
            $plugin,
            ConverterPlugin,
            converter,
            convert,
            conversion_review,
            run_converter
        );
    };
}
