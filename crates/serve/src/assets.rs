//! The pages' files, embedded in the binary (`crates/serve/assets/`): three HTML pages, their
//! scripts and style, and the vendored board library cm-chessboard 8.15.1 (MIT; see
//! `assets/vendor/cm-chessboard/README.md` for what was taken and the licences of its sprites).
//! No file is fetched from anywhere else, at build time or at run time.

/// `(path under assets/, contents)` of every embedded file.
macro_rules! embed {
    ($($path:literal),* $(,)?) => {
        &[$(($path, include_bytes!(concat!("../assets/", $path)) as &[u8])),*]
    };
}

/// Every embedded file.
pub const FILES: &[(&str, &[u8])] = embed!(
    "index.html",
    "games.html",
    "play.html",
    "app.css",
    "favicon.svg",
    "common.js",
    "board.js",
    "dashboard.js",
    "games.js",
    "play.js",
    "vendor/cm-chessboard/LICENSE",
    "vendor/cm-chessboard/README.md",
    "vendor/cm-chessboard/src/Chessboard.js",
    "vendor/cm-chessboard/src/lib/Svg.js",
    "vendor/cm-chessboard/src/lib/Utils.js",
    "vendor/cm-chessboard/src/model/ChessboardState.js",
    "vendor/cm-chessboard/src/model/Extension.js",
    "vendor/cm-chessboard/src/model/Position.js",
    "vendor/cm-chessboard/src/view/ChessboardView.js",
    "vendor/cm-chessboard/src/view/PositionAnimationsQueue.js",
    "vendor/cm-chessboard/src/view/VisualMoveInput.js",
    "vendor/cm-chessboard/src/extensions/markers/Markers.js",
    "vendor/cm-chessboard/src/extensions/arrows/Arrows.js",
    "vendor/cm-chessboard/src/extensions/promotion-dialog/PromotionDialog.js",
    "vendor/cm-chessboard/assets/chessboard.css",
    "vendor/cm-chessboard/assets/pieces/standard.svg",
    "vendor/cm-chessboard/assets/extensions/markers/markers.css",
    "vendor/cm-chessboard/assets/extensions/markers/markers.svg",
    "vendor/cm-chessboard/assets/extensions/arrows/arrows.css",
    "vendor/cm-chessboard/assets/extensions/arrows/arrows.svg",
    "vendor/cm-chessboard/assets/extensions/promotion-dialog/promotion-dialog.css",
);

/// The content type of an embedded file, by extension.
fn mime(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        _ => "text/plain; charset=utf-8",
    }
}

/// The embedded file at `path` (relative to `assets/`) and its content type.
pub fn get(path: &str) -> Option<(&'static [u8], &'static str)> {
    FILES.iter().find(|(p, _)| *p == path).map(|&(p, bytes)| (bytes, mime(p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Resolves `./x` and `../x` against the directory of `from`.
    fn join(from: &str, relative: &str) -> String {
        let mut parts: Vec<&str> = from.split('/').collect();
        parts.pop();
        for part in relative.split('/') {
            match part {
                "." => {}
                ".." => {
                    parts.pop();
                }
                p => parts.push(p),
            }
        }
        parts.join("/")
    }

    #[test]
    fn every_module_import_of_an_embedded_script_is_embedded() {
        let mut checked = 0;
        for (path, bytes) in FILES.iter().filter(|(p, _)| p.ends_with(".js")) {
            let text = std::str::from_utf8(bytes).unwrap();
            for line in text.lines().filter(|l| l.trim_start().starts_with("import ")) {
                let Some(spec) = line.split(['"', '\'']).nth(1) else { continue };
                let target = if let Some(absolute) = spec.strip_prefix("/assets/") {
                    absolute.to_string()
                } else {
                    join(path, spec)
                };
                assert!(get(&target).is_some(), "{path} imports {spec} ({target}), not embedded");
                checked += 1;
            }
        }
        assert!(checked > 20, "only {checked} imports seen");
    }

    #[test]
    fn pages_load_only_embedded_files() {
        for page in ["index.html", "games.html", "play.html"] {
            let text = std::str::from_utf8(get(page).unwrap().0).unwrap();
            for attr in ["src=\"", "href=\""] {
                for piece in text.split(attr).skip(1) {
                    let url = piece.split('"').next().unwrap();
                    if let Some(asset) = url.strip_prefix("/assets/") {
                        assert!(get(asset).is_some(), "{page} loads {url}, not embedded");
                    } else {
                        assert!(
                            ["/", "/games", "/play"].contains(&url) || url.starts_with("/run/"),
                            "{page} links {url}: only embedded files, the pages and run files"
                        );
                    }
                }
            }
        }
    }
}
