//! sandbox-garbage: an admission plugin whose answer is not JSON; the host
//! passes it through and the caller must fail to parse it.

wit_bindgen::generate!({
    path: "../../../plugin-sdk/wit",
    world: "admission",
});

struct Garbage;

impl Guest for Garbage {
    fn review(_admission_review: String) -> Result<String, String> {
        Ok("not json".to_string())
    }
}

export!(Garbage);
