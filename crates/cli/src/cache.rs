//! The warm cache of `gpulens check`: each file's findings, kept between runs
//! and reused while nothing they depend on has changed, so an unchanged tree
//! is re-checked without parsing or running a single rule.
//!
//! A file's findings are a function of four things, and an entry is used only
//! when all four are what they were:
//! - the file's bytes (an xxh3-128 hash of them; the path is only where to
//!   look, never trusted on its own);
//! - the settings that apply to the file (its `[tool.gpulens]` merged with
//!   `--select`/`--ignore`), hashed per entry;
//! - the GPU profile the advice is for, and
//! - the gpulens build (its version, and the size and modification time of
//!   the running executable, so a rebuilt binary never reads its
//!   predecessor's results); these two are the key in the cache file's
//!   header.
//!
//! Layout: `DIR/VERSION/KEY` holds every entry for one GPU profile and one
//! set of command-line overrides (so alternating `--target-gpu` values or
//! `--select` lists do not evict each other), with a `.gitignore` and a
//! `CACHEDIR.TAG` in `DIR`. A cache file starts with a header (magic, format,
//! key, length and checksum of the body), so one from another build, cut
//! short or damaged is ignored and rewritten; it is replaced whole through a
//! temporary file and a rename, so runs in parallel never see half of one.
//! Nothing here is ever an error: a cache that cannot be read is rebuilt,
//! one that cannot be written costs a warning.
//!
//! The project index (see `project::index`) is kept beside the findings,
//! in `DIR/VERSION/project-index`: one per folder, keyed by the indexed
//! files' module names and bytes and by the build, read back whole while
//! they are unchanged and made again (all of it) when one changed.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::io::{Seek, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use gpulens_diagnostics::{Applicability, Code, Edit, Finding, Fix, Settings, Severity};
use gpulens_gpu::GpuProfile;
use gpulens_knowledge::Knowledge;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::{xxh3_128, xxh3_64, Xxh3};

/// Changes whenever the layout of a cache file changes.
const FORMAT: u32 = 2;
const MAGIC: &[u8; 8] = b"gpulensC";
/// Magic, format, key, body length, body checksum.
const HEADER_LEN: usize = 8 + 4 + 16 + 8 + 8;

/// The name of the default cache folder, in the current directory.
pub const DEFAULT_DIR: &str = ".gpulens_cache";

/// A [`Finding`] as stored, without its fix (kept apart, so that a run that
/// shows no fixes does not read them): names rather than this build's
/// `'static` strings and enum values, borrowed from the cache file.
#[derive(Serialize, Deserialize)]
struct Stored<'a> {
    range: Range<usize>,
    code: &'a str,
    library: &'a str,
    severity: &'a str,
    message: &'a str,
    details: &'a str,
    stays_on_cpu: bool,
}

#[derive(Serialize, Deserialize)]
struct StoredFix<'a> {
    safe: bool,
    message: &'a str,
    details: &'a str,
    #[serde(borrow)]
    edits: Vec<(Range<usize>, &'a str)>,
    #[serde(borrow)]
    cell: Option<&'a str>,
}

/// A finding built back with this build's strings; `None` for a code,
/// library or severity this build does not know (the build key makes that
/// all but impossible; such an entry is a miss).
fn record(stored: Stored<'_>, fix: Option<StoredFix<'_>>) -> Option<Finding> {
    let code = Code::parse(stored.code)?;
    let library = gpulens_diagnostics::RULES
        .iter()
        .map(|r| r.library)
        .find(|l| *l == stored.library)
        .or_else(|| Knowledge::get().library(stored.library).map(|l| l.id.as_str()))?;
    let severity =
        [Severity::Error, Severity::Warning, Severity::Info, Severity::Hint].into_iter().find(|s| s.as_str() == stored.severity)?;
    let fix = fix.map(|f| {
        let applicability = if f.safe { Applicability::Safe } else { Applicability::Unsafe };
        match f.cell {
            Some(cell) => Fix::first_cell(applicability, f.message.to_string(), f.details.to_string(), cell.to_string()),
            None => Fix::new(
                applicability,
                f.message.to_string(),
                f.details.to_string(),
                f.edits.into_iter().map(|(range, text)| Edit { range, text: text.to_string() }).collect(),
            ),
        }
    });
    Some(Finding {
        range: stored.range,
        code,
        library,
        severity,
        message: stored.message.to_string(),
        details: stored.details.to_string(),
        stays_on_cpu: stored.stays_on_cpu,
        fix,
    })
}

/// What is kept for one file. The findings and their fixes are encoded
/// apart and decoded only for a file that is shown (most files have none),
/// so opening the cache costs one allocation per file, not per finding.
#[derive(Serialize, Deserialize)]
pub struct Entry<'a> {
    /// xxh3-128 of the file's bytes.
    content: u128,
    /// Hash of the settings that applied to it.
    settings: u64,
    /// Whether `fixes` holds the findings' fixes (an analysis may skip them
    /// when nothing will show them; such an entry does not serve a run that
    /// shows them).
    fixed: bool,
    /// `Vec<Stored>`, empty for none.
    #[serde(borrow, serialize_with = "as_bytes")]
    findings: Cow<'a, [u8]>,
    /// `Vec<Option<StoredFix>>`, one per finding.
    #[serde(borrow, serialize_with = "as_bytes")]
    fixes: Cow<'a, [u8]>,
}

// serde hands `serialize_with` the field itself, hence `&Cow`.
#[allow(clippy::ptr_arg)]
fn as_bytes<S: serde::Serializer>(bytes: &Cow<'_, [u8]>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bytes(bytes)
}

/// A cache file for one run of `check`, as read (or not: then empty).
pub struct CacheFile {
    folder: PathBuf,
    path: PathBuf,
    key: u128,
    /// Absolute paths are the keys; relative ones are made absolute against this.
    cwd: PathBuf,
    /// The whole file when its header matched (else empty).
    bytes: Vec<u8>,
}

/// The cache in use: the entries of a [`CacheFile`], by path.
pub struct Cache<'a> {
    file: &'a CacheFile,
    entries: HashMap<&'a str, Entry<'a>>,
}

/// Where a file is looked up, and the hashes its entry must match.
pub struct Lookup {
    pub path: String,
    content: u128,
    settings: u64,
}

impl CacheFile {
    /// Opens the cache in `folder` for this GPU profile and these
    /// command-line overrides. `None` when no key can be made for this build
    /// (its executable cannot be found), in which case nothing is cached.
    /// `project`: the digest of the project index the findings read (one
    /// file's declared returns change another's findings).
    pub fn open(folder: PathBuf, gpu: &GpuProfile, overrides: &impl std::fmt::Debug, project: u64) -> Option<CacheFile> {
        let cwd = std::env::current_dir().ok()?;
        let folder = cwd.join(folder);
        let build = build_fingerprint()?;
        let config = format!("{gpu:?}\n{overrides:?}");
        let mut key = Xxh3::new();
        key.update(&FORMAT.to_le_bytes());
        key.update(env!("CARGO_PKG_VERSION").as_bytes());
        key.update(&build.to_le_bytes());
        key.update(config.as_bytes());
        key.update(&project.to_le_bytes());
        let path = folder.join(env!("CARGO_PKG_VERSION")).join(format!("{:016x}", xxh3_64(config.as_bytes())));
        let mut cache = CacheFile { folder, path, key: key.digest128(), cwd, bytes: Vec::new() };
        // Anything that does not read back whole and for this key is as good as no cache.
        if let Ok(bytes) = std::fs::read(&cache.path) {
            if cache.verify(&bytes) {
                cache.bytes = bytes;
            }
        }
        Some(cache)
    }

    fn verify(&self, bytes: &[u8]) -> bool {
        let Some((header, body)) = bytes.split_at_checked(HEADER_LEN) else { return false };
        let (magic, rest) = header.split_at(8);
        let (format, rest) = rest.split_at(4);
        let (key, rest) = rest.split_at(16);
        let (len, checksum) = rest.split_at(8);
        magic == MAGIC
            && format == FORMAT.to_le_bytes()
            && key == self.key.to_le_bytes()
            && len == (body.len() as u64).to_le_bytes()
            && checksum == xxh3_64(body).to_le_bytes()
    }

    /// The entries, by path (none when the file was missing, stale or would not decode).
    pub fn entries(&self) -> Cache<'_> {
        let body = self.bytes.get(HEADER_LEN..).unwrap_or_default();
        let list: Vec<(&str, Entry<'_>)> = postcard::from_bytes(body).unwrap_or_default();
        Cache { file: self, entries: list.into_iter().collect() }
    }
}

impl Cache<'_> {
    /// The cache file.
    pub fn path(&self) -> &Path {
        &self.file.path
    }

    /// The key of `path` and the hashes its entry must match.
    pub fn lookup(&self, path: &Path, bytes: &[u8], settings: &Settings) -> Lookup {
        let absolute = absolute(&self.file.cwd, path);
        Lookup {
            path: absolute.to_string_lossy().into_owned(),
            content: xxh3_128(bytes),
            settings: xxh3_64(format!("{settings:?}").as_bytes()),
        }
    }

    /// The stored findings for this file, when they are still right.
    /// `need_fixes`: whether the run shows fixes.
    pub fn get(&self, lookup: &Lookup, need_fixes: bool) -> Option<Vec<Finding>> {
        let entry = self.entries.get(lookup.path.as_str())?;
        let valid = entry.content == lookup.content && entry.settings == lookup.settings && (entry.fixed || !need_fixes);
        if !valid {
            return None;
        }
        if entry.findings.is_empty() {
            return Some(Vec::new());
        }
        let stored: Vec<Stored<'_>> = postcard::from_bytes(&entry.findings).ok()?;
        let mut fixes: Vec<Option<StoredFix<'_>>> =
            if need_fixes { postcard::from_bytes(&entry.fixes).ok()? } else { Vec::new() };
        if need_fixes && fixes.len() != stored.len() {
            return None;
        }
        fixes.resize_with(stored.len(), || None);
        stored.into_iter().zip(fixes).map(|(s, f)| record(s, f)).collect()
    }

    /// An entry for the file `lookup` was made for: its findings, and
    /// whether they carry their fixes; `None` if they cannot be encoded
    /// (then nothing is stored).
    pub fn entry(lookup: &Lookup, findings: &[Finding], fixed: bool) -> Option<Entry<'static>> {
        let (findings, fixes) = if findings.is_empty() {
            (Vec::new(), Vec::new())
        } else {
            let stored: Vec<Stored<'_>> = findings
                .iter()
                .map(|r| Stored {
                    range: r.range.clone(),
                    code: r.code.as_str(),
                    library: r.library,
                    severity: r.severity.as_str(),
                    message: &r.message,
                    details: &r.details,
                    stays_on_cpu: r.stays_on_cpu,
                })
                .collect();
            let fixes: Vec<Option<StoredFix<'_>>> = findings
                .iter()
                .map(|r| {
                    r.fix.as_ref().map(|f| StoredFix {
                        safe: f.applicability == Applicability::Safe,
                        message: &f.message,
                        details: &f.details,
                        edits: f.edits.iter().map(|e| (e.range.clone(), e.text.as_str())).collect(),
                        cell: f.cell.as_deref(),
                    })
                })
                .collect();
            (postcard::to_allocvec(&stored).ok()?, postcard::to_allocvec(&fixes).ok()?)
        };
        let entry = Entry {
            content: lookup.content,
            settings: lookup.settings,
            fixed,
            findings: Cow::Owned(findings),
            fixes: Cow::Owned(fixes),
        };
        Some(entry)
    }

    /// Stores this run's results: `fresh` entries for the files that were
    /// analysed, and the stored entries of the files in `checked` that were
    /// reused; drops what is known of files under `roots` (the paths the run
    /// was given) that were not checked (deleted, now ignored, unreadable).
    /// Writes nothing when nothing changed; a cache that cannot be written
    /// costs a warning.
    pub fn save(mut self, fresh: Vec<(String, Entry<'static>)>, checked: &HashSet<String>, roots: &[PathBuf]) {
        let roots: Vec<PathBuf> = roots.iter().map(|r| absolute(&self.file.cwd, r)).collect();
        let before = self.entries.len();
        self.entries.retain(|path, _| checked.contains(*path) || !roots.iter().any(|r| Path::new(path).starts_with(r)));
        if fresh.is_empty() && self.entries.len() == before {
            return;
        }
        let mut all: HashMap<&str, &Entry<'_>> = self.entries.iter().map(|(path, e)| (*path, e)).collect();
        all.extend(fresh.iter().map(|(path, e)| (path.as_str(), e)));
        let all: Vec<(&str, &Entry<'_>)> = all.into_iter().collect();
        if let Err(e) = self.file.write(&all) {
            eprintln!("gpulens: warning: cannot write the cache in {}: {e} (--no-cache skips it)", self.file.folder.display());
        }
    }
}

impl CacheFile {
    fn write(&self, entries: &[(&str, &Entry<'_>)]) -> std::io::Result<()> {
        let dir = self.path.parent().expect("the cache file is in a folder");
        make_folder(&self.folder)?;
        std::fs::create_dir_all(dir)?;
        // Streamed to the file (no copy of the body in memory), behind a
        // header whose length and checksum are filled in at the end.
        let mut temp = tempfile::NamedTempFile::new_in(dir)?;
        temp.write_all(&[0; HEADER_LEN])?;
        let mut body = Hashing { inner: std::io::BufWriter::new(temp.as_file_mut()), hash: Xxh3::new(), len: 0 };
        postcard::to_io(entries, &mut body).map_err(std::io::Error::other)?;
        body.flush()?;
        let (len, checksum) = (body.len, body.hash.digest());
        drop(body);
        let mut header = Vec::with_capacity(HEADER_LEN);
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&FORMAT.to_le_bytes());
        header.extend_from_slice(&self.key.to_le_bytes());
        header.extend_from_slice(&len.to_le_bytes());
        header.extend_from_slice(&checksum.to_le_bytes());
        temp.seek(std::io::SeekFrom::Start(0))?;
        temp.write_all(&header)?;
        temp.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }
}

/// A writer that hashes and counts what it passes on.
struct Hashing<W> {
    inner: W,
    hash: Xxh3,
    len: u64,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(bytes)?;
        self.hash.update(&bytes[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// `path` made absolute against `cwd`, without `.` components.
fn absolute(cwd: &Path, path: &Path) -> PathBuf {
    cwd.join(path).components().collect()
}

/// Something that changes whenever the gpulens binary does: its size and
/// modification time. A release installs a new binary, and so does every
/// rebuild during development, so results of changed rules are never reused.
/// Makes the cache folder `folder` if it is not there, kept out of version
/// control and of backups, like other tools' caches.
fn make_folder(folder: &Path) -> std::io::Result<()> {
    if !folder.is_dir() {
        std::fs::create_dir_all(folder)?;
        std::fs::write(folder.join(".gitignore"), "# Made by gpulens: everything here can be deleted.\n*\n")?;
        std::fs::write(
            folder.join("CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55\n\
             # This file is a cache directory tag created by gpulens.\n\
             # For information about cache directory tags see https://bford.info/cachedir/\n",
        )?;
    }
    Ok(())
}

/// The project index stored in `folder` for `key` (what the indexed files
/// hold, see `project::index`), if one was stored for it by this build.
pub fn load_index(folder: &Path, key: u128) -> Option<gpulens_diagnostics::project::ProjectIndex> {
    let bytes = std::fs::read(index_path(folder)).ok()?;
    let (header, body) = bytes.split_at_checked(16 + 8)?;
    let (stored_key, checksum) = header.split_at(16);
    if stored_key != index_key(key)?.to_le_bytes() || checksum != xxh3_64(body).to_le_bytes() {
        return None;
    }
    gpulens_diagnostics::project::ProjectIndex::from_stored(postcard::from_bytes(body).ok()?)
}

/// Stores `index` in `folder` for `key`, replacing the one there (through a
/// temporary file and a rename). Failing is silent (the index is made again
/// next time; the findings' cache, written to the same folder, warns).
pub fn store_index(folder: &Path, key: u128, index: &gpulens_diagnostics::project::ProjectIndex) {
    let Some(key) = index_key(key) else { return };
    let Ok(body) = postcard::to_stdvec(&index.stored()) else { return };
    let path = index_path(folder);
    let Some(parent) = path.parent() else { return };
    if make_folder(folder).is_err() || std::fs::create_dir_all(parent).is_err() {
        return;
    }
    let _ = tempfile::NamedTempFile::new_in(parent).and_then(|mut file| {
        file.write_all(&key.to_le_bytes())?;
        file.write_all(&xxh3_64(&body).to_le_bytes())?;
        file.write_all(&body)?;
        file.persist(&path).map_err(|e| e.error)?;
        Ok(())
    });
}

/// The key of a stored index: what the files hold, this build, and the format.
fn index_key(files: u128) -> Option<u128> {
    let mut h = Xxh3::new();
    h.update(&FORMAT.to_le_bytes());
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update(&build_fingerprint()?.to_le_bytes());
    h.update(&files.to_le_bytes());
    Some(h.digest128())
}

/// Where the stored index is: beside the findings' cache files.
pub fn index_path(folder: &Path) -> PathBuf {
    folder.join(env!("CARGO_PKG_VERSION")).join(INDEX_FILE)
}

/// The name of the stored project index's file.
pub const INDEX_FILE: &str = "project-index";

fn build_fingerprint() -> Option<u128> {
    let meta = std::env::current_exe().and_then(std::fs::metadata).ok()?;
    let modified = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
    let mut h = Xxh3::new();
    h.update(&meta.len().to_le_bytes());
    h.update(&modified.as_nanos().to_le_bytes());
    Some(h.digest128())
}
