//! `--otlp-sink PORT`: an OTLP/gRPC trace collector that accepts every
//! export and keeps nothing (plain HTTP/2 on 127.0.0.1), so a traced
//! server's cost can be measured with its spans really exported.

use std::convert::Infallible;

type Frames = futures_util::stream::Iter<
    std::vec::IntoIter<Result<hyper::body::Frame<bytes::Bytes>, Infallible>>,
>;

/// Serves until the process is killed.
pub async fn serve(port: u16) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    loop {
        let (tcp, _) = listener.accept().await?;
        tokio::spawn(async move {
            let svc =
                hyper::service::service_fn(|req: http::Request<hyper::body::Incoming>| async {
                    use http_body_util::BodyExt;
                    let _ = req.into_body().collect().await;
                    Ok::<_, Infallible>(accepted())
                });
            let exec = hyper_util::rt::TokioExecutor::new();
            let conn = hyper::server::conn::http2::Builder::new(exec);
            let _ = conn
                .serve_connection(hyper_util::rt::TokioIo::new(tcp), svc)
                .await;
        });
    }
}

/// An empty ExportTraceServiceResponse, grpc-status 0.
fn accepted() -> http::Response<http_body_util::StreamBody<Frames>> {
    let mut trailers = http::HeaderMap::new();
    trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
    let frames = vec![
        Ok(hyper::body::Frame::data(bytes::Bytes::from_static(&[0; 5]))),
        Ok(hyper::body::Frame::trailers(trailers)),
    ];
    let body = http_body_util::StreamBody::new(futures_util::stream::iter(frames));
    let mut resp = http::Response::new(body);
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/grpc"),
    );
    resp
}
