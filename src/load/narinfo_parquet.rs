//! A narinfo dataset in Parquet: one row per narinfo, in the layout public narinfo
//! datasets use (`StorePath`, `References`, `NarSize`, and optionally `FileSize`,
//! `Deriver`, `NarHash`; other columns such as `URL` or `Compression` are not read),
//! as one file or a directory of files (a partitioned dataset, subdirectories
//! included). Recognised by the Parquet magic `PAR1`, never by a file name.
//!
//! Column names are matched without regard to case or underscores (`StorePath`,
//! `store_path`). `StorePath` holds full store paths or base names; `References` is a
//! list of strings or one string of space-separated names (as in a `.narinfo`), each a
//! base name or a full path. Sizes are 32- or 64-bit integers, signed or unsigned.
//!
//! Only the column readers of the `parquet` crate are used (no arrow). Without roots
//! (`LoadOptions::roots`) every row becomes a path. With roots, a dataset of any size
//! is read in two passes: the first reads the `StorePath` column alone into a sorted
//! index of 16 bytes a row (an 8-byte hash prefix and the row's number), the second
//! walks the roots' closure breadth first, decoding only the row groups that hold a
//! wanted row. Errors name the file, the row group, the row (counted from 0 in the
//! file, as DuckDB's `file_row_number`) and the column.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use parquet::basic::{ConvertedType, LogicalType, Type as PhysicalType};
use parquet::column::reader::{get_typed_column_reader, ColumnReader};
use parquet::data_type::{ByteArray, ByteArrayType, Int32Type, Int64Type};
use parquet::file::reader::{FileReader, RowGroupReader};
use parquet::file::serialized_reader::SerializedFileReader;

use super::{LoadError, LoadOptions};
use crate::store::{
    hash_prefix, package_name, Closure, LoadWarning, NarHash, PathInfo, SourceKind, StoreDir,
    StorePath,
};

/// The first (and last) four bytes of every Parquet file.
pub const MAGIC: &[u8; 4] = b"PAR1";

/// How deep subdirectories of a dataset directory are searched for Parquet files
/// (`year=2024/month=01/part-0.parquet` is two levels down).
const MAX_DEPTH: usize = 4;

/// The most matches a root query may have; more is an error listing some of them.
const MAX_ROOT_MATCHES: usize = 30;

/// Whether the regular file at `path` starts with the Parquet magic.
pub(super) fn is_parquet_file(path: &Path) -> bool {
    let mut head = [0u8; 4];
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
        && File::open(path).is_ok_and(|mut f| f.read_exact(&mut head).is_ok())
        && &head == MAGIC
}

/// Whether the directory `dir` holds a Parquet file (searched as [`dataset_files`]).
pub(super) fn dir_holds_parquet(dir: &Path) -> bool {
    let mut found = Vec::new();
    collect(dir, 0, &mut found, true).is_ok() && !found.is_empty()
}

/// The Parquet files of a dataset directory, sorted: every regular file with the
/// magic, in `dir` and its subdirectories (to [`MAX_DEPTH`]); other files are skipped
/// (`_SUCCESS`, checksums).
pub fn dataset_files(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let mut found = Vec::new();
    collect(dir, 0, &mut found, false)?;
    found.sort();
    Ok(found)
}

fn collect(dir: &Path, depth: usize, out: &mut Vec<PathBuf>, first: bool) -> Result<(), LoadError> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| LoadError::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        if first && !out.is_empty() {
            return Ok(());
        }
        // Symlinks are not followed out of the dataset: only what `symlink_metadata`
        // calls a file or a directory.
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() && depth < MAX_DEPTH {
            collect(&p, depth + 1, out, first)?;
        } else if meta.is_file() && is_parquet_file(&p) {
            out.push(p);
        }
    }
    Ok(())
}

/// Load a dataset (one Parquet file, or a directory of them): the closure of
/// `opts.roots` when there are any, else every row.
pub fn load(path: &Path, opts: &LoadOptions) -> Result<Closure, LoadError> {
    let files = if std::fs::metadata(path)
        .map_err(|e| LoadError::io(path, e))?
        .is_dir()
    {
        dataset_files(path)?
    } else {
        vec![path.to_path_buf()]
    };
    // The parquet crate checks what it reads, but a corrupt file could still reach one
    // of its assertions: that is this file's error too, not a crash.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let dataset = Dataset::open(path, &files, opts)?;
        let mut closure = Closure::new(
            dataset.store_dir.clone(),
            SourceKind::NarinfoDataset,
            path.display().to_string(),
        );
        if opts.roots.is_empty() {
            dataset.read_all(&mut closure)?;
        } else {
            dataset.read_closure(&opts.roots, &mut closure)?;
        }
        opts.timings.step("load: narinfo dataset");
        Ok(closure)
    }))
    .unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("no message");
        Err(LoadError::Parquet {
            path: path.to_path_buf(),
            row_group: None,
            row: None,
            column: None,
            message: format!("the Parquet reader failed on damaged data ({what})"),
        })
    })
}

/// The columns nixcut reads, as (name, required).
const COLUMNS: [(&str, bool); 6] = [
    ("StorePath", true),
    ("References", true),
    ("NarSize", true),
    ("FileSize", false),
    ("Deriver", false),
    ("NarHash", false),
];
const STORE_PATH: usize = 0;
const REFERENCES: usize = 1;
const NAR_SIZE: usize = 2;
const FILE_SIZE: usize = 3;
const DERIVER: usize = 4;
const NAR_HASH: usize = 5;

/// How a column's values are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// One string a row.
    Text,
    /// A list of strings a row (`list<string>`).
    TextList,
    /// One integer a row; `unsigned` when the values are to be read as `u64`.
    Int { wide: bool, unsigned: bool },
}

/// One column of one file: its leaf index and shape.
#[derive(Debug, Clone, Copy)]
struct Column {
    leaf: usize,
    shape: Shape,
    /// The definition level of a present value.
    max_def: i16,
    /// In a list, the definition level of a null element (`None`: elements are
    /// required).
    null_element: Option<i16>,
}

/// One opened file of the dataset.
struct DataFile {
    path: PathBuf,
    reader: SerializedFileReader<File>,
    columns: [Option<Column>; 6],
    /// The number of the first row of each row group, in the file.
    group_start: Vec<u64>,
}

/// An opened dataset: its files, in order, and the store directory of its paths.
struct Dataset {
    /// The file or directory given.
    origin: PathBuf,
    files: Vec<DataFile>,
    /// The number each file's first row has in the dataset (rows numbered across
    /// files, in order).
    file_start: Vec<u64>,
    store_dir: StoreDir,
}

/// Where a row is: file, row group, row in the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct RowAt {
    file: u32,
    group: u32,
    offset: u32,
}

/// The values of one row group, column by column.
struct Group {
    store_path: Vec<Option<String>>,
    references: Vec<Vec<String>>,
    nar_size: Vec<Option<u64>>,
    file_size: Vec<Option<u64>>,
    deriver: Vec<Option<String>>,
    nar_hash: Vec<Option<String>>,
}

fn error(
    path: &Path,
    row_group: Option<usize>,
    row: Option<u64>,
    column: Option<usize>,
    message: impl Into<String>,
) -> LoadError {
    LoadError::Parquet {
        path: path.to_path_buf(),
        row_group,
        row,
        column: column.map(|c| COLUMNS[c].0.to_string()),
        message: message.into(),
    }
}

/// `StorePath` → `storepath`: column names compared without case and underscores.
fn normal(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

impl DataFile {
    fn open(path: &Path) -> Result<DataFile, LoadError> {
        let file = File::open(path).map_err(|e| LoadError::io(path, e))?;
        let reader = SerializedFileReader::new(file).map_err(|e| {
            error(
                path,
                None,
                None,
                None,
                format!("not a readable Parquet file: {e}"),
            )
        })?;
        let meta = reader.metadata();
        let schema = meta.file_metadata().schema_descr();
        let mut columns = [None; 6];
        for (c, (name, required)) in COLUMNS.iter().enumerate() {
            let want = normal(name);
            let leaves: Vec<usize> = (0..schema.num_columns())
                .filter(|&i| normal(&schema.column(i).path().parts()[0]) == want)
                .collect();
            let leaf = match leaves[..] {
                [] if *required => {
                    let have: Vec<String> = schema
                        .root_schema()
                        .get_fields()
                        .iter()
                        .map(|f| crate::store::sanitize(f.name(), 40))
                        .collect();
                    return Err(error(
                        path,
                        None,
                        None,
                        Some(c),
                        format!(
                            "the file has no `{name}` column (its columns: {})",
                            have.join(", ")
                        ),
                    ));
                }
                [] => continue,
                [leaf] => leaf,
                _ => {
                    return Err(error(
                        path,
                        None,
                        None,
                        Some(c),
                        format!("expected a column of {}, found a struct", expected(c)),
                    ))
                }
            };
            let descr = schema.column(leaf);
            let wrong = |found: String| {
                error(
                    path,
                    None,
                    None,
                    Some(c),
                    format!("expected {}, found {found}", expected(c)),
                )
            };
            let physical = descr.physical_type();
            let shape = match (physical, descr.max_rep_level(), c) {
                (PhysicalType::BYTE_ARRAY, 0, _) if c != NAR_SIZE && c != FILE_SIZE => Shape::Text,
                (PhysicalType::BYTE_ARRAY, 1, REFERENCES) => Shape::TextList,
                (PhysicalType::INT32 | PhysicalType::INT64, 0, NAR_SIZE | FILE_SIZE) => {
                    let unsigned = matches!(
                        descr.logical_type_ref(),
                        Some(LogicalType::Integer(int)) if !int.is_signed
                    ) || matches!(
                        descr.converted_type(),
                        ConvertedType::UINT_32 | ConvertedType::UINT_64
                    );
                    Shape::Int {
                        wide: physical == PhysicalType::INT64,
                        unsigned,
                    }
                }
                (t, 0, _) => return Err(wrong(format!("{t} values"))),
                (t, _, _) => return Err(wrong(format!("lists of {t}"))),
            };
            let max_def = descr.max_def_level();
            let element_optional = descr.self_type().get_basic_info().has_repetition()
                && descr.self_type().get_basic_info().repetition()
                    == parquet::basic::Repetition::OPTIONAL;
            columns[c] = Some(Column {
                leaf,
                shape,
                max_def,
                null_element: (shape == Shape::TextList && element_optional).then(|| max_def - 1),
            });
        }
        let mut group_start = Vec::with_capacity(meta.num_row_groups());
        let mut start = 0u64;
        for g in meta.row_groups() {
            group_start.push(start);
            start += u64::try_from(g.num_rows()).unwrap_or(0);
        }
        Ok(DataFile {
            path: path.to_path_buf(),
            reader,
            columns,
            group_start,
        })
    }

    fn groups(&self) -> usize {
        self.group_start.len()
    }

    /// The number of rows of the file.
    fn rows(&self) -> u64 {
        let meta = self.reader.metadata();
        (meta.row_groups().iter()).fold(0, |n, g| n + u64::try_from(g.num_rows()).unwrap_or(0))
    }

    fn group_rows(&self, g: usize) -> usize {
        usize::try_from(self.reader.metadata().row_group(g).num_rows()).unwrap_or(0)
    }

    fn group_reader(&self, g: usize) -> Result<Box<dyn RowGroupReader + '_>, LoadError> {
        self.reader
            .get_row_group(g)
            .map_err(|e| error(&self.path, Some(g), None, None, e.to_string()))
    }

    /// Read column `c` of row group `g`: its values, definition and repetition levels.
    fn levels<T: parquet::data_type::DataType>(
        &self,
        rg: &dyn RowGroupReader,
        g: usize,
        c: usize,
        col: Column,
    ) -> Result<Levels<T::T>, LoadError> {
        let fail = |e: parquet::errors::ParquetError| {
            error(
                &self.path,
                Some(g),
                None,
                Some(c),
                format!("cannot be read: {e}"),
            )
        };
        let reader: ColumnReader = rg.get_column_reader(col.leaf).map_err(fail)?;
        let mut reader = get_typed_column_reader::<T>(reader);
        let rows = self.group_rows(g);
        let (mut values, mut def, mut rep) = (Vec::new(), Vec::new(), Vec::new());
        let mut read = 0;
        while read < rows {
            let (n, _, _) = reader
                .read_records(rows - read, Some(&mut def), Some(&mut rep), &mut values)
                .map_err(fail)?;
            if n == 0 {
                return Err(error(
                    &self.path,
                    Some(g),
                    Some(self.group_start[g] + read as u64),
                    Some(c),
                    format!("the column ends after {read} of the row group's {rows} rows"),
                ));
            }
            read += n;
        }
        Ok((values, def, rep))
    }

    /// The text of a value, or an error naming its row.
    fn text(&self, g: usize, row: usize, c: usize, v: &ByteArray) -> Result<String, LoadError> {
        std::str::from_utf8(v.data())
            .map(str::to_string)
            .map_err(|e| {
                error(
                    &self.path,
                    Some(g),
                    Some(self.group_start[g] + row as u64),
                    Some(c),
                    format!("the value is not UTF-8 (at byte {})", e.valid_up_to()),
                )
            })
    }

    /// A text column of row group `g`, one optional string a row.
    fn texts(
        &self,
        rg: &dyn RowGroupReader,
        g: usize,
        c: usize,
    ) -> Result<Vec<Option<String>>, LoadError> {
        let Some(col) = self.columns[c] else {
            return Ok(vec![None; self.group_rows(g)]);
        };
        let (values, def, _) = self.levels::<ByteArrayType>(rg, g, c, col)?;
        let mut values = values.iter();
        let mut out = Vec::with_capacity(self.group_rows(g));
        for row in 0..self.group_rows(g) {
            let present = col.max_def == 0 || def.get(row) == Some(&col.max_def);
            let v = if present { values.next() } else { None };
            out.push(match v {
                Some(v) => Some(self.text(g, row, c, v)?),
                None => None,
            });
        }
        Ok(out)
    }

    /// The `References` of row group `g`: a list of names a row.
    fn reference_lists(
        &self,
        rg: &dyn RowGroupReader,
        g: usize,
    ) -> Result<Vec<Vec<String>>, LoadError> {
        let c = REFERENCES;
        let Some(col) = self.columns[c] else {
            return Ok(vec![Vec::new(); self.group_rows(g)]);
        };
        if col.shape == Shape::Text {
            return Ok(self
                .texts(rg, g, c)?
                .into_iter()
                .map(|t| {
                    t.map(|t| t.split_ascii_whitespace().map(str::to_string).collect())
                        .unwrap_or_default()
                })
                .collect());
        }
        let (values, def, rep) = self.levels::<ByteArrayType>(rg, g, c, col)?;
        let mut values = values.iter();
        let mut out: Vec<Vec<String>> = Vec::with_capacity(self.group_rows(g));
        for (&d, &r) in def.iter().zip(&rep) {
            if r == 0 {
                out.push(Vec::new());
            }
            let row = out.len().saturating_sub(1);
            if d == col.max_def {
                let v = values.next().ok_or_else(|| {
                    error(
                        &self.path,
                        Some(g),
                        Some(self.group_start[g] + row as u64),
                        Some(c),
                        "fewer values than levels",
                    )
                })?;
                let t = self.text(g, row, c, v)?;
                if let Some(list) = out.last_mut() {
                    list.push(t);
                }
            } else if Some(d) == col.null_element {
                return Err(error(
                    &self.path,
                    Some(g),
                    Some(self.group_start[g] + row as u64),
                    Some(c),
                    "a reference is null",
                ));
            }
        }
        if out.len() != self.group_rows(g) {
            return Err(error(
                &self.path,
                Some(g),
                None,
                Some(c),
                format!(
                    "{} lists for the row group's {} rows",
                    out.len(),
                    self.group_rows(g)
                ),
            ));
        }
        Ok(out)
    }

    /// An integer column of row group `g`, one optional size a row.
    fn sizes(
        &self,
        rg: &dyn RowGroupReader,
        g: usize,
        c: usize,
    ) -> Result<Vec<Option<u64>>, LoadError> {
        let Some(col) = self.columns[c] else {
            return Ok(vec![None; self.group_rows(g)]);
        };
        let Shape::Int { wide, unsigned } = col.shape else {
            return Err(error(
                &self.path,
                Some(g),
                None,
                Some(c),
                "not an integer column",
            ));
        };
        let (values, def): (Vec<i64>, Vec<i16>) = if wide {
            let (v, d, _) = self.levels::<Int64Type>(rg, g, c, col)?;
            (v, d)
        } else {
            let (v, d, _) = self.levels::<Int32Type>(rg, g, c, col)?;
            let v = v
                .into_iter()
                .map(|x| {
                    if unsigned {
                        i64::from(x as u32)
                    } else {
                        i64::from(x)
                    }
                })
                .collect();
            (v, d)
        };
        let mut values = values.into_iter();
        let mut out = Vec::with_capacity(self.group_rows(g));
        for row in 0..self.group_rows(g) {
            let present = col.max_def == 0 || def.get(row) == Some(&col.max_def);
            let v = if present { values.next() } else { None };
            out.push(match v {
                None => None,
                Some(x) if unsigned => Some(x as u64),
                Some(x) => Some(u64::try_from(x).map_err(|_| {
                    error(
                        &self.path,
                        Some(g),
                        Some(self.group_start[g] + row as u64),
                        Some(c),
                        format!("expected a size (a number of bytes), found {x}"),
                    )
                })?),
            });
        }
        Ok(out)
    }

    /// Every column nixcut reads, of row group `g`.
    fn group(&self, g: usize) -> Result<Group, LoadError> {
        let rg = self.group_reader(g)?;
        let rg = rg.as_ref();
        Ok(Group {
            store_path: self.texts(rg, g, STORE_PATH)?,
            references: self.reference_lists(rg, g)?,
            nar_size: self.sizes(rg, g, NAR_SIZE)?,
            file_size: self.sizes(rg, g, FILE_SIZE)?,
            deriver: self.texts(rg, g, DERIVER)?,
            nar_hash: self.texts(rg, g, NAR_HASH)?,
        })
    }
}

/// A column chunk as read: its non-null values, definition and repetition levels.
type Levels<V> = (Vec<V>, Vec<i16>, Vec<i16>);

/// What column `c` must hold, for errors.
fn expected(c: usize) -> &'static str {
    match c {
        STORE_PATH => "store paths (strings)",
        REFERENCES => "references (a list of strings, or one string of space-separated names)",
        NAR_SIZE | FILE_SIZE => "sizes (integers)",
        DERIVER => "derivers (strings)",
        _ => "NAR hashes (strings)",
    }
}

/// The base name of a store path given as a full path or a base name: what follows
/// the last `/`.
fn base_of(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

impl Dataset {
    fn open(origin: &Path, files: &[PathBuf], opts: &LoadOptions) -> Result<Dataset, LoadError> {
        let files = files
            .iter()
            .map(|p| DataFile::open(p))
            .collect::<Result<Vec<_>, _>>()?;
        let store_dir = match &opts.store_dir {
            Some(sd) => sd.clone(),
            None => Self::store_dir_of(&files)?.unwrap_or_default(),
        };
        let mut file_start = Vec::with_capacity(files.len());
        let mut start = 0u64;
        for f in &files {
            file_start.push(start);
            start += f.rows();
        }
        Ok(Dataset {
            origin: origin.to_path_buf(),
            files,
            file_start,
            store_dir,
        })
    }

    /// The number of rows of every file.
    fn rows(&self) -> u64 {
        self.files.last().map_or(0, |f| f.rows()) + self.file_start.last().copied().unwrap_or(0)
    }

    /// Where the row numbered `n` in the dataset is.
    fn locate(&self, n: u64) -> RowAt {
        let file = self
            .file_start
            .partition_point(|&s| s <= n)
            .saturating_sub(1);
        let f = &self.files[file];
        let in_file = n - self.file_start[file];
        let group = f
            .group_start
            .partition_point(|&s| s <= in_file)
            .saturating_sub(1);
        RowAt {
            file: file as u32,
            group: group as u32,
            offset: (in_file - f.group_start[group]) as u32,
        }
    }

    /// The store directory of the first full path in the first row group that has
    /// one (the dataset may also hold base names only: then `None`).
    fn store_dir_of(files: &[DataFile]) -> Result<Option<StoreDir>, LoadError> {
        for f in files {
            for g in 0..f.groups() {
                let rg = f.group_reader(g)?;
                for p in f.texts(rg.as_ref(), g, STORE_PATH)?.into_iter().flatten() {
                    if let Some((dir, _)) = p.rsplit_once('/') {
                        if !dir.is_empty() {
                            return Ok(Some(StoreDir::new(dir)));
                        }
                    }
                }
            }
        }
        Ok(None)
    }

    fn path_at(
        &self,
        f: &DataFile,
        g: usize,
        row: usize,
        c: usize,
        s: &str,
    ) -> Result<StorePath, LoadError> {
        self.store_dir.parse_path_or_base(s).map_err(|e| {
            error(
                &f.path,
                Some(g),
                Some(f.group_start[g] + row as u64),
                Some(c),
                format!(
                    "expected a store path, found `{}` ({e})",
                    crate::store::sanitize(s, 120)
                ),
            )
        })
    }

    /// The path described by row `row` of `group` (of file `f`, row group `g`).
    fn path_info(
        &self,
        f: &DataFile,
        g: usize,
        group: &mut Group,
        row: usize,
        warnings: &mut Vec<LoadWarning>,
    ) -> Result<PathInfo, LoadError> {
        let at = Some(f.group_start[g] + row as u64);
        let Some(sp) = group.store_path[row].take() else {
            return Err(error(
                &f.path,
                Some(g),
                at,
                Some(STORE_PATH),
                "the store path is null",
            ));
        };
        let mut info = PathInfo::new(self.path_at(f, g, row, STORE_PATH, &sp)?);
        for r in std::mem::take(&mut group.references[row]) {
            info.references
                .push(self.path_at(f, g, row, REFERENCES, &r)?);
        }
        info.nar_size = group.nar_size[row];
        if info.nar_size.is_none() {
            warnings.push(LoadWarning::NarinfoNoSize {
                file: f.path.display().to_string(),
                path: info.path.to_string(),
            });
        }
        info.download_size = group.file_size[row];
        info.nar_hash = group.nar_hash[row]
            .take()
            .filter(|h| !h.is_empty())
            .map(|h| NarHash::parse(&h));
        if let Some(d) = group.deriver[row]
            .take()
            .filter(|d| !d.is_empty() && d != "unknown-deriver")
        {
            match self.store_dir.parse_path_or_base(&d) {
                Ok(d) => info.deriver = Some(d),
                Err(e) => warnings.push(LoadWarning::DeriverIgnored {
                    file: f.path.display().to_string(),
                    line: None,
                    path: Some(self.store_dir.display(&info.path)),
                    error: e.to_string(),
                }),
            }
        }
        Ok(info)
    }

    /// Add `info` to `closure`, warning when the dataset describes the path twice.
    fn add(&self, f: &DataFile, closure: &mut Closure, info: PathInfo) {
        if closure.paths.contains_key(&info.path) {
            closure.warnings.push(LoadWarning::ListedTwice {
                file: f.path.display().to_string(),
                path: self.store_dir.display(&info.path),
                record: true,
            });
        }
        closure.insert(info);
    }

    /// Every row, as a path of `closure`.
    fn read_all(&self, closure: &mut Closure) -> Result<(), LoadError> {
        for f in &self.files {
            for g in 0..f.groups() {
                let mut group = f.group(g)?;
                for row in 0..f.group_rows(g) {
                    let info = self.path_info(f, g, &mut group, row, &mut closure.warnings)?;
                    self.add(f, closure, info);
                }
            }
        }
        Ok(())
    }

    /// The closure of `roots` (queries as `Closure::select_root` takes them).
    fn read_closure(&self, roots: &[String], closure: &mut Closure) -> Result<(), LoadError> {
        let queries: Vec<RootQuery> = roots
            .iter()
            .map(|q| RootQuery::new(q, &self.store_dir))
            .collect();
        // Pass 1: the index (hash prefix → row number, 16 bytes a row, allocated once),
        // and which rows the queries match.
        let mut index: Vec<(u64, u64)> =
            Vec::with_capacity(usize::try_from(self.rows()).unwrap_or(0));
        let mut matches: Vec<[Vec<(RowAt, String)>; TIERS]> =
            queries.iter().map(|_| Default::default()).collect();
        for (fi, f) in self.files.iter().enumerate() {
            for g in 0..f.groups() {
                let rg = f.group_reader(g)?;
                let paths = f.texts(rg.as_ref(), g, STORE_PATH)?;
                let first = self.file_start[fi] + f.group_start[g];
                for (row, p) in paths.iter().enumerate() {
                    let Some(p) = p else {
                        return Err(error(
                            &f.path,
                            Some(g),
                            Some(f.group_start[g] + row as u64),
                            Some(STORE_PATH),
                            "the store path is null",
                        ));
                    };
                    let base = base_of(p);
                    if base.len() < 8 {
                        // Refused, with its position, when the row is read.
                        continue;
                    }
                    let at = RowAt {
                        file: fi as u32,
                        group: g as u32,
                        offset: row as u32,
                    };
                    index.push((hash_prefix(base.as_bytes()), first + row as u64));
                    for (q, m) in queries.iter().zip(&mut matches) {
                        if let Some(tier) = q.tier(base) {
                            if m[tier].len() <= MAX_ROOT_MATCHES {
                                m[tier].push((at, base.to_string()));
                            }
                        }
                    }
                }
            }
        }
        index.sort_unstable();
        // The roots: for each query, the matches of its best tier.
        let mut frontier: BTreeSet<RowAt> = BTreeSet::new();
        for (q, m) in queries.iter().zip(matches) {
            let Some(best) = m.into_iter().find(|t| !t.is_empty()) else {
                return Err(LoadError::Invalid {
                    path: self.origin.clone(),
                    message: format!(
                        "no row of the dataset is the root `{}`",
                        crate::store::sanitize(&q.query, 120)
                    ),
                });
            };
            if best.len() > MAX_ROOT_MATCHES {
                let names: Vec<&str> = best.iter().map(|(_, b)| b.as_str()).take(10).collect();
                return Err(LoadError::Invalid {
                    path: self.origin.clone(),
                    message: format!(
                        "the root `{}` matches more than {MAX_ROOT_MATCHES} rows, such as {}; name one path",
                        crate::store::sanitize(&q.query, 120),
                        names.join(", ")
                    ),
                });
            }
            frontier.extend(best.into_iter().map(|(at, _)| at));
        }
        // Pass 2: breadth first, one decoding of each row group a level needs.
        let mut wanted: BTreeSet<StorePath> = BTreeSet::new();
        let mut seen: BTreeSet<RowAt> = BTreeSet::new();
        let mut is_root = frontier.clone();
        while !frontier.is_empty() {
            let mut by_group: BTreeMap<(u32, u32), Vec<u32>> = BTreeMap::new();
            for at in std::mem::take(&mut frontier) {
                if seen.insert(at) {
                    by_group
                        .entry((at.file, at.group))
                        .or_default()
                        .push(at.offset);
                }
            }
            for ((fi, g), offsets) in by_group {
                let f = &self.files[fi as usize];
                let mut group = f.group(g as usize)?;
                for off in offsets {
                    let at = RowAt {
                        file: fi,
                        group: g,
                        offset: off,
                    };
                    let info = self.path_info(
                        f,
                        g as usize,
                        &mut group,
                        off as usize,
                        &mut closure.warnings,
                    )?;
                    // A row reached through a shared hash prefix that is not the path
                    // asked for.
                    if !is_root.remove(&at) && !wanted.contains(&info.path) {
                        continue;
                    }
                    for r in &info.references {
                        if wanted.insert(r.clone()) {
                            let key = r.hash_prefix();
                            let start = index.partition_point(|(k, _)| *k < key);
                            frontier.extend(
                                index[start..]
                                    .iter()
                                    .take_while(|(k, _)| *k == key)
                                    .map(|&(_, n)| self.locate(n)),
                            );
                        }
                    }
                    wanted.insert(info.path.clone());
                    self.add(f, closure, info);
                }
            }
        }
        Ok(())
    }
}

/// How many kinds of match a root query has, best first: see [`RootQuery::tier`].
const TIERS: usize = 5;

/// A root as the user named it, ready to be matched against base names.
struct RootQuery {
    query: String,
    /// The base name it names, when it is a store path or a base name.
    base: Option<String>,
    /// The text matched against hashes and names.
    q: String,
}

impl RootQuery {
    fn new(query: &str, sd: &StoreDir) -> RootQuery {
        let q = query.trim_end_matches('/');
        // A symlink into the store (`./result`): the store path its link text names.
        let resolved = resolve_link(Path::new(q), sd);
        let q = resolved.as_deref().unwrap_or(q);
        let base = sd
            .split_path(q)
            .map(|(p, _)| p)
            .or_else(|_| StorePath::from_base_name(q))
            .ok()
            .map(|p| format!("{}-{}", p.hash_part(), p.name()));
        RootQuery {
            query: query.to_string(),
            base,
            q: q.to_string(),
        }
    }

    /// Which kind of match `base` is for this query, best first, as
    /// `Closure::select_path` prefers them: the path itself, its hash, its name, its
    /// package name, a hash prefix (5 characters or more, or as tables print a path).
    fn tier(&self, base: &str) -> Option<usize> {
        let (hash, name) = match base.split_once('-') {
            Some((h, n)) => (h, n),
            None => (base, ""),
        };
        if self.base.as_deref() == Some(base) {
            return Some(0);
        }
        let q = self.q.as_str();
        if hash == q {
            return Some(1);
        }
        if name == q {
            return Some(2);
        }
        if package_name(name) == q {
            return Some(3);
        }
        let (prefix, want_name) = match q.split_once("…-") {
            Some((h, n)) => (h, Some(n)),
            None => (q, None),
        };
        let ok = prefix.len() >= 5 && prefix.bytes().all(|b| b.is_ascii_alphanumeric());
        (ok && hash.starts_with(prefix) && want_name.is_none_or(|n| n == name)).then_some(4)
    }
}

/// The store path a chain of symlinks at `p` leads to, by their link texts only.
fn resolve_link(p: &Path, sd: &StoreDir) -> Option<String> {
    let mut cur = p.to_path_buf();
    for _ in 0..40 {
        let text = std::fs::read_link(&cur).ok()?;
        let next = if text.is_absolute() {
            text
        } else {
            cur.parent().unwrap_or(Path::new(".")).join(text)
        };
        let s = next.to_str()?;
        if let Ok((sp, _)) = sd.split_path(s) {
            return Some(sd.display(&sp));
        }
        cur = next;
    }
    None
}
