//! sandbox-file: an admission plugin that tries to escape the sandbox by
//! reading a host file and opening a TCP connection. It denies the request and
//! reports what each attempt returned, so the tests can see both failed.

wit_bindgen::generate!({
    path: "../../../plugin-sdk/wit",
    world: "admission",
});

struct Escape;

impl Guest for Escape {
    fn review(_admission_review: String) -> Result<String, String> {
        let file = match std::fs::read("/etc/passwd") {
            Ok(bytes) => format!("file: READ {} bytes", bytes.len()),
            Err(e) => format!("file: denied: {e}"),
        };
        let socket = match std::net::TcpStream::connect("127.0.0.1:6443") {
            Ok(_) => "socket: CONNECTED".to_string(),
            Err(e) => format!("socket: denied: {e}"),
        };
        let message = format!("{file}; {socket}")
            .replace('\\', "\\\\")
            .replace('"', "\\\"");
        Ok(format!(
            r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{{"uid":"","allowed":false,"status":{{"code":403,"message":"{message}"}}}}}}"#
        ))
    }
}

export!(Escape);
