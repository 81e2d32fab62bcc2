//! sandbox-alloc: an admission plugin that allocates memory without bound, so
//! the host's per-call memory limit has something to refuse.

wit_bindgen::generate!({
    path: "../../../plugin-sdk/wit",
    world: "admission",
});

struct Hog;

impl Guest for Hog {
    fn review(_admission_review: String) -> Result<String, String> {
        let mut chunks: Vec<Vec<u8>> = Vec::new();
        loop {
            chunks.push(vec![1u8; 1 << 20]);
            std::hint::black_box(&chunks);
        }
    }
}

export!(Hog);
