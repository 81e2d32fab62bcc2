//! sandbox-trap: an admission plugin that panics, which traps the instance.

wit_bindgen::generate!({
    path: "../../../plugin-sdk/wit",
    world: "admission",
});

struct Panics;

impl Guest for Panics {
    fn review(_admission_review: String) -> Result<String, String> {
        panic!("sandbox-trap panicked on purpose");
    }
}

export!(Panics);
