//! sandbox-loop: an admission plugin that never returns, so the host's
//! timeout (epoch interruption) has something to stop.

wit_bindgen::generate!({
    path: "../../../plugin-sdk/wit",
    world: "admission",
});

struct Spin;

impl Guest for Spin {
    fn review(_admission_review: String) -> Result<String, String> {
        let mut n: u64 = 0;
        loop {
            n = std::hint::black_box(n.wrapping_add(1));
        }
    }
}

export!(Spin);
