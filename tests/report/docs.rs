//! The documentation holds to the code: the findings reference is generated
//! from the registry, and every page links only to files that exist.
//! (The commands of the README and of `docs/` are run by `tests/report/cli.rs`.)

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_findings_reference_is_the_registry() {
    let mut page = Vec::new();
    lwarscope::report::findings_reference(&mut page).unwrap();
    let page = String::from_utf8(page).unwrap();
    let path = root().join("docs/findings.md");
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &page).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == page,
        "docs/findings.md differs from the registry: run `UPDATE_DOCS=1 cargo test --test report docs::` and review the diff"
    );
    // Every registered name is on the page (a check on the generator itself).
    let mut listed = Vec::new();
    lwarscope::report::list_findings(&mut listed).unwrap();
    for line in String::from_utf8(listed).unwrap().lines() {
        let name = line.split_whitespace().next().unwrap();
        assert!(
            page.contains(&format!("| `{name}` |")),
            "{name} is not on the page"
        );
    }
}

/// Every Markdown file of the front door and the guide.
fn pages() -> Vec<PathBuf> {
    let mut out = vec![
        root().join("README.md"),
        root().join("ARCHITECTURE.md"),
        root().join("benches/NOTEBOOK.md"),
    ];
    let mut dirs = vec![root().join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_relative_link_leads_to_a_file() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = &rest[..end];
            rest = &rest[end..];
            if target.contains("://") || target.starts_with('#') || target.contains(' ') {
                continue;
            }
            let file = target.split('#').next().unwrap();
            if !page.parent().unwrap().join(file).exists() {
                broken.push(format!("{}: {target}", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links: {broken:#?}");
}

#[test]
fn the_readme_is_a_front_door() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines: move detail to docs/"
    );
}
