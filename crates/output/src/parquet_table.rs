//! Run output on disk: one Parquet file per time series and `summary.json`.
//!
//! This is the only writer of a run directory (`ccbench run --out`, `Result.save`), so the Python
//! side never needs pyarrow to save. Columns are REQUIRED (no nulls): doubles, 64-bit integers or
//! UTF-8 strings, which pandas reads back as float64, int64 and str.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use parquet::basic::{Compression, LogicalType, Repetition, Type as PhysicalType};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{ColumnPath, Type};

/// One column's values.
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    /// Strings kept as indices into a name list: flow and link names repeat on every row.
    Names {
        idx: Vec<u32>,
        names: Arc<[String]>,
    },
    Str(Vec<String>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::Names { idx, .. } => idx.len(),
            Column::Str(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The kind tag shared with Python (`"f64"`, `"i64"`, `"str"`).
    pub fn kind(&self) -> &'static str {
        match self {
            Column::F64(_) => "f64",
            Column::I64(_) => "i64",
            Column::Names { .. } | Column::Str(_) => "str",
        }
    }

    fn parquet_type(&self, name: &str) -> Result<Type, ParquetError> {
        let (physical, logical) = match self {
            Column::F64(_) => (PhysicalType::DOUBLE, None),
            Column::I64(_) => (PhysicalType::INT64, None),
            Column::Names { .. } | Column::Str(_) => (PhysicalType::BYTE_ARRAY, Some(LogicalType::String)),
        };
        Type::primitive_type_builder(name, physical)
            .with_repetition(Repetition::REQUIRED)
            .with_logical_type(logical)
            .build()
    }
}

/// Named columns of equal length.
#[derive(Default)]
pub struct Table {
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }

    /// Ragged columns would make a file pandas cannot read; reject them here with the culprit.
    pub fn check(&self, table: &str) -> Result<(), String> {
        let rows = self.rows();
        match self.columns.iter().find(|(_, c)| c.len() != rows) {
            Some((name, c)) => {
                Err(format!("{table}: column {name} has {} rows, the first column {rows}", c.len()))
            }
            None => Ok(()),
        }
    }
}

/// Snappy everywhere; dictionary encoding only for the name columns. On the float columns a
/// dictionary never pays (values rarely repeat) but costs a hash per value until it overflows.
fn properties(table: &Table) -> WriterProperties {
    let mut builder =
        WriterProperties::builder().set_compression(Compression::SNAPPY).set_dictionary_enabled(false);
    for (name, col) in &table.columns {
        if col.kind() == "str" {
            builder = builder.set_column_dictionary_enabled(ColumnPath::from(name.as_str()), true);
        }
    }
    builder.build()
}

/// Write `table` to `path` as one row group.
pub fn write_parquet(path: &Path, table: &Table) -> Result<(), ParquetError> {
    let fields = table
        .columns
        .iter()
        .map(|(name, col)| col.parquet_type(name).map(Arc::new))
        .collect::<Result<Vec<_>, _>>()?;
    let schema = Arc::new(Type::group_type_builder("schema").with_fields(fields).build()?);
    let props = Arc::new(properties(table));
    // Created beside `path` and renamed into place (`ccbench_files`): never through a link.
    let mut new = ccbench_files::NewFile::create(path).map_err(|e| ParquetError::General(e.why))?;
    let file = BufWriter::new(&mut new);
    let mut writer = SerializedFileWriter::new(file, schema, props)?;
    let mut group = writer.next_row_group()?;
    for (_, col) in &table.columns {
        let mut out = group.next_column()?.expect("one column writer per schema field");
        match col {
            Column::F64(v) => {
                out.typed::<DoubleType>().write_batch(v, None, None)?;
            }
            Column::I64(v) => {
                out.typed::<Int64Type>().write_batch(v, None, None)?;
            }
            Column::Names { idx, names } => {
                let names: Vec<ByteArray> = names.iter().map(|n| ByteArray::from(n.as_str())).collect();
                // ByteArray clones share the bytes, so this is one pointer copy per row.
                let values: Vec<ByteArray> = idx.iter().map(|&i| names[i as usize].clone()).collect();
                out.typed::<ByteArrayType>().write_batch(&values, None, None)?;
            }
            Column::Str(v) => {
                let values: Vec<ByteArray> = v.iter().map(|s| ByteArray::from(s.as_str())).collect();
                out.typed::<ByteArrayType>().write_batch(&values, None, None)?;
            }
        }
        out.close()?;
    }
    group.close()?;
    let mut file = writer.into_inner()?;
    file.flush()?;
    drop(file);
    new.commit().map(drop).map_err(|e| ParquetError::General(e.why))
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::RowAccessor;
    use std::fs::File;

    #[test]
    fn columns_round_trip_with_their_types() {
        let names: Arc<[String]> = vec!["a".to_string(), "b".to_string()].into();
        let table = Table {
            columns: vec![
                ("t_s".into(), Column::F64(vec![0.1, 0.2, f64::NAN])),
                ("flow".into(), Column::Names { idx: vec![1, 0, 1], names }),
                ("drops".into(), Column::I64(vec![0, 7, 3])),
                ("note".into(), Column::Str(vec!["x".into(), "".into(), "µ".into()])),
            ],
        };
        table.check("t").unwrap();
        let path = std::env::temp_dir().join(format!("ccbench-output-{}.parquet", std::process::id()));
        write_parquet(&path, &table).unwrap();
        let reader = SerializedFileReader::try_from(File::open(&path).unwrap()).unwrap();
        std::fs::remove_file(&path).unwrap();
        let schema = reader.metadata().file_metadata().schema_descr();
        let cols: Vec<_> =
            schema.columns().iter().map(|c| (c.name().to_string(), c.physical_type())).collect();
        assert_eq!(
            cols,
            vec![
                ("t_s".to_string(), PhysicalType::DOUBLE),
                ("flow".to_string(), PhysicalType::BYTE_ARRAY),
                ("drops".to_string(), PhysicalType::INT64),
                ("note".to_string(), PhysicalType::BYTE_ARRAY),
            ]
        );
        let rows: Vec<_> = reader.get_row_iter(None).unwrap().map(|r| r.unwrap()).collect();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].get_double(0).unwrap(), 0.1);
        assert!(rows[2].get_double(0).unwrap().is_nan());
        let flows: Vec<_> = rows.iter().map(|r| r.get_string(1).unwrap().clone()).collect();
        assert_eq!(flows, ["b", "a", "b"]);
        assert_eq!(rows[1].get_long(2).unwrap(), 7);
        assert_eq!(rows[2].get_string(3).unwrap(), "µ");
    }

    #[test]
    fn ragged_tables_are_refused() {
        let table =
            Table { columns: vec![("a".into(), Column::F64(vec![1.0])), ("b".into(), Column::I64(vec![]))] };
        assert_eq!(table.check("t").unwrap_err(), "t: column b has 0 rows, the first column 1");
    }
}
