//! The page's files, embedded in the binary: no CDN, no build step.

/// `(content type, body)` of the page's file at `path` (`""` is the page itself).
pub(crate) fn file(path: &str) -> Option<(&'static str, &'static str)> {
    match path {
        "" | "index.html" => Some(("text/html; charset=utf-8", include_str!("page/index.html"))),
        "app.js" => Some((
            "text/javascript; charset=utf-8",
            include_str!("page/app.js"),
        )),
        "form.js" => Some((
            "text/javascript; charset=utf-8",
            include_str!("page/form.js"),
        )),
        "render.js" => Some((
            "text/javascript; charset=utf-8",
            include_str!("page/render.js"),
        )),
        "style.css" => Some(("text/css; charset=utf-8", include_str!("page/style.css"))),
        _ => None,
    }
}
