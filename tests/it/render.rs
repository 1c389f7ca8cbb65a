//! The HTML and PDF reports opened by real readers: headless Chromium loads the page,
//! screenshots it to PNG and reports console messages and the laid-out size of every chart;
//! poppler turns the PDF into text (pdftotext), page images (pdftoppm) and its page count
//! and size (pdfinfo). `.ci/run` installs Debian's `chromium` and `poppler-utils`; where a
//! tool is missing the test says so and skips, except under CI, where it fails.
//!
//! The PNGs are written under cargo's target directory (`render/`), never into the repo.
//! `tests/render/chromium.sh` runs the same Chromium command by hand.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CHROMIUM: &[&str] = &["chromium", "chromium-browser", "google-chrome"];

/// The first of `names` on PATH; `None` with the reason printed, or a panic under CI.
fn tool(names: &[&str], package: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in names {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    let reason = format!(
        "{} not found on PATH: install Debian's {package} (bash .ci/run does)",
        names.join(" or ")
    );
    assert!(std::env::var_os("CI").is_none(), "{reason}");
    // Straight to the process's stderr: libtest would capture eprintln! and show nothing.
    let _ = std::io::stderr().write_all(format!("\nskipped: {reason}\n").as_bytes());
    None
}

/// A fresh directory under the target directory.
fn workdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("render")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn quantscope(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_quantscope"))
        .args(args)
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "quantscope {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A text matrix of `rows` channels of 64 values, every 97th quiet.
fn many(dir: &Path, rows: usize) -> PathBuf {
    let mut text = String::new();
    for r in 0..rows {
        let quiet = if r % 97 == 0 { 0.01 } else { 1.0 };
        let row: Vec<String> = (0..64)
            .map(|c| format!("{}", (((r * 31 + c * 17) % 29) as f32 / 14.0 - 1.0) * quiet))
            .collect();
        text.push_str(&row.join(" "));
        text.push('\n');
    }
    let path = dir.join(format!("many-{rows}.txt"));
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs headless Chromium on `page` with `args`; returns its output.
fn chromium(browser: &Path, dir: &Path, page: &Path, args: &[&str]) -> Output {
    let profile = dir.join(format!("profile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    std::fs::create_dir_all(&profile).unwrap();
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    let _ = std::fs::remove_dir_all(&profile);
    out
}

/// The page's console messages and blocked loads, as Chromium logs them.
fn console(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect()
}

/// Width and height of a PNG, from its header.
fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(
        &bytes[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} is a PNG",
        path.display()
    );
    let be = |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    (be(16), be(20))
}

/// A copy of `page` whose script (the report has none, and forbids one) writes the size
/// of every chart and the page's width into the document, for `--dump-dom`.
fn measuring_copy(page: &Path, dir: &Path) -> PathBuf {
    let html = std::fs::read_to_string(page).unwrap();
    let policy = html
        .lines()
        .find(|l| l.contains("Content-Security-Policy"))
        .expect("the report states its policy")
        .to_string();
    let script = "<script>addEventListener('load',()=>{const s=[...document.querySelectorAll('figure svg')].map(e=>{const b=e.getBoundingClientRect();return Math.round(b.width)+'x'+Math.round(b.height)});const p=document.createElement('pre');p.id='measured';p.textContent='charts '+s.join(' ')+' page '+document.documentElement.scrollWidth+' '+innerWidth;document.body.appendChild(p)})</script>";
    let copy = html
        .replace(&policy, "")
        .replace("</body>", &format!("{script}</body>"));
    let path = dir.join("measured.html");
    std::fs::write(&path, copy).unwrap();
    path
}

/// Chart sizes and (page width, window width) of `page` laid out `width` pixels wide.
fn measure(browser: &Path, dir: &Path, page: &Path, width: u32) -> (Vec<(u32, u32)>, u32, u32) {
    let copy = measuring_copy(page, dir);
    let out = chromium(
        browser,
        dir,
        &copy,
        &[
            &format!("--window-size={width},900"),
            "--virtual-time-budget=5000",
            "--dump-dom",
        ],
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom
        .find("<pre id=\"measured\">charts ")
        .expect("the measuring script ran");
    let text = &dom[start + "<pre id=\"measured\">charts ".len()..];
    let text = &text[..text.find("</pre>").unwrap()];
    let (charts, page_part) = text.split_once("page ").unwrap();
    let sizes = charts
        .split_whitespace()
        .map(|s| {
            let (w, h) = s.split_once('x').unwrap();
            (w.parse().unwrap(), h.parse().unwrap())
        })
        .collect();
    let mut widths = page_part.split_whitespace().map(|n| n.parse().unwrap());
    (sizes, widths.next().unwrap(), widths.next().unwrap())
}

#[test]
fn chromium_catches_a_console_error_and_a_blocked_load() {
    let Some(browser) = tool(CHROMIUM, "chromium") else {
        return;
    };
    let dir = workdir("control");
    let page = dir.join("bad.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\"></head><body><img src=\"http://127.0.0.1:9/x.png\"></body></html>",
    )
    .unwrap();
    let out = chromium(&browser, &dir, &page, &["--dump-dom"]);
    assert!(
        !console(&out).is_empty(),
        "the check would miss an error: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn chromium_shows_the_html_report_without_errors_wide_and_narrow() {
    let Some(browser) = tool(CHROMIUM, "chromium") else {
        return;
    };
    let dir = workdir("html");
    let big = many(&dir, 4096);
    let cases = [
        ("small", vec!["report", "--formats"]),
        (
            "big",
            vec!["report", big.to_str().unwrap(), "-g", "channel"],
        ),
    ];
    for (name, args) in cases {
        let page = dir.join(format!("{name}.html"));
        let mut args = args.clone();
        let out_path = page.display().to_string();
        args.extend(["-f", "html", "-o", &out_path]);
        quantscope(&args);
        let html = std::fs::read_to_string(&page).unwrap();
        let figures = html.matches("<figure").count();
        assert!(figures >= 4, "{name}: {figures} charts");
        // 500 px is the narrowest window headless Chromium lays out.
        for width in [1280, 500] {
            let png = dir.join(format!("{name}-{width}.png"));
            let out = chromium(
                &browser,
                &dir,
                &page,
                &[
                    &format!("--screenshot={}", png.display()),
                    &format!("--window-size={width},2400"),
                ],
            );
            assert_eq!(console(&out), Vec::<String>::new(), "{name} at {width}px");
            assert_eq!(png_size(&png), (width, 2400), "{name} at {width}px");
            let (sizes, page_width, window) = measure(&browser, &dir, &page, width);
            assert_eq!(
                sizes.len(),
                figures,
                "{name} at {width}px: every chart is laid out"
            );
            for (w, h) in sizes {
                assert!(
                    w >= 300 && h >= 30,
                    "{name} at {width}px: a chart of {w}x{h}"
                );
                assert!(
                    w <= window,
                    "{name} at {width}px: a chart of {w} px overflows"
                );
            }
            assert!(
                page_width <= window,
                "{name} at {width}px: the page is {page_width} px wide in a {window} px window"
            );
        }
    }
}

/// Runs a poppler tool; returns its standard output.
fn poppler(tool: &Path, args: &[&str]) -> String {
    let out = Command::new(tool)
        .args(args)
        .output()
        .expect("poppler runs");
    assert!(
        out.status.success(),
        "{}: {}",
        tool.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn poppler_reads_the_pdf_numbers_pages_and_paper() {
    let (Some(pdftotext), Some(pdftoppm), Some(pdfinfo)) = (
        tool(&["pdftotext"], "poppler-utils"),
        tool(&["pdftoppm"], "poppler-utils"),
        tool(&["pdfinfo"], "poppler-utils"),
    ) else {
        return;
    };
    let dir = workdir("pdf");
    let table = String::from_utf8(quantscope(&["report"]).stdout).unwrap();
    // The Overall row of the table format: the PDF must hold the same numbers.
    let overall: Vec<&str> = table
        .lines()
        .skip_while(|l| *l != "Overall")
        .nth(2)
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(
        overall,
        ["0.05107", "0.07569", "0.15", "27.32", "1", "of", "2"]
    );
    for (paper, size, pages) in [("a4", "595.28 x 841.89", 3), ("letter", "612 x 792", 3)] {
        let pdf = dir.join(format!("small-{paper}.pdf"));
        let path = pdf.display().to_string();
        quantscope(&["report", "-f", "pdf", "--paper", paper, "-o", &path]);
        let info = poppler(&pdfinfo, &[&path]);
        assert!(
            info.contains(&format!("Page size:       {size} pts")),
            "{info}"
        );
        assert!(
            info.contains(&format!("Pages:           {pages}\n")),
            "{paper}: {info}"
        );
        let text = poppler(&pdftotext, &["-layout", &path, "-"]);
        assert!(text.contains("quantscope: int4 symmetric narrow [-7, 7], tensor; matrix 2 x 4"));
        let row = text
            .lines()
            .skip_while(|l| l.trim() != "Overall")
            .nth(2)
            .unwrap();
        assert_eq!(
            row.split_whitespace().collect::<Vec<_>>(),
            overall,
            "{paper}"
        );
        assert!(text.contains("COLLAPSED"));
        assert!(
            text.contains("0.05 -> 0, -0.08 -> 0, 0.12 -> 0, -0.15"),
            "a chart's caption"
        );
        assert!(
            text.contains("rings original, dots reconstructed"),
            "a chart's own text is text"
        );
        assert!(text.contains(&format!("page {pages} of {pages}")));
        let prefix = dir.join(paper).display().to_string();
        poppler(&pdftoppm, &["-r", "50", "-png", &path, &prefix]);
        let images = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| {
                let path = e.path();
                let name = e.file_name().to_string_lossy().into_owned();
                name.starts_with(&format!("{paper}-"))
                    && path.extension().is_some_and(|x| x == "png")
            })
            .count();
        assert_eq!(images, pages, "{paper}: one image per page");
    }
    let big = many(&dir, 4096);
    let pdf = dir.join("big.pdf");
    let path = pdf.display().to_string();
    quantscope(&[
        "report",
        big.to_str().unwrap(),
        "-g",
        "channel",
        "-f",
        "pdf",
        "-o",
        &path,
    ]);
    let info = poppler(&pdfinfo, &[&path]);
    let pages: usize = info
        .lines()
        .find_map(|l| l.strip_prefix("Pages:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!((3..=10).contains(&pages), "4096 channels on {pages} pages");
    assert!(std::fs::metadata(&pdf).unwrap().len() < 400_000);
    let text = poppler(&pdftotext, &["-layout", &path, "-"]);
    assert!(
        text.contains("The 32 worst of 4096 channels"),
        "the listing says what it is"
    );
    assert!(text.contains("matrix 4096 x 64"));
}

#[test]
fn poppler_reads_the_comparison_in_the_pdf() {
    let Some(pdftotext) = tool(&["pdftotext"], "poppler-utils") else {
        return;
    };
    let dir = workdir("pdf-compare");
    let pdf = dir.join("compare.pdf");
    let path = pdf.display().to_string();
    let out = quantscope(&[
        "report",
        "--compare",
        "lesson,granularity=channel",
        "-f",
        "pdf",
        "-o",
        &path,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = poppler(&pdftotext, &["-layout", &path, "-"]);
    let section = text
        .split_once("\nComparison\n")
        .map(|(_, rest)| rest)
        .expect("a Comparison section");
    assert!(
        section.contains("What differs: granularity: channel -> tensor."),
        "{section}"
    );
    // The quiet row: collapsed under B (per tensor), not under A (per channel).
    let quiet = section
        .lines()
        .find(|l| l.contains("quiet"))
        .expect("the quiet row");
    assert!(quiet.contains("COLLAPSED"), "{quiet}");
}
