// Reads Parquet files with independent readers (hyparquet, and DuckDB when its package is
// present) and prints, per file and reader, every column's values flattened in row order as
// JSON (integers as decimal text, floats as JavaScript numbers' text, NaN as "NaN"), the row
// count and each row's list length. Usage: node parquet_read.mjs <node_modules dir> <file>...
import { createRequire } from 'node:module';
import path from 'node:path';
import zlib from 'node:zlib';
import { pathToFileURL } from 'node:url';

const [modules, ...files] = process.argv.slice(2);
const load = async (name) => {
  const require = createRequire(path.join(modules, 'x.js'));
  return import(pathToFileURL(require.resolve(name)).href);
};

const text = (v) => (typeof v === 'bigint' ? v.toString() : Number.isNaN(v) ? 'NaN' : String(v));

function summarize(rows) {
  const columns = {};
  for (const row of rows) {
    for (const [name, value] of Object.entries(row)) {
      const c = (columns[name] ??= { values: [], lengths: [] });
      const items = Array.isArray(value) || ArrayBuffer.isView(value) ? Array.from(value) : [value];
      c.lengths.push(Array.isArray(value) || ArrayBuffer.isView(value) ? items.length : -1);
      for (const v of items) c.values.push(text(v));
    }
  }
  return { rows: rows.length, columns };
}

const out = {};
const hyparquet = await load('hyparquet');
let duckdb = null;
try {
  duckdb = await load('@duckdb/node-api');
} catch (e) {
  duckdb = null;
}
for (const file of files) {
  const entry = (out[file] = {});
  const buffer = await hyparquet.asyncBufferFromFile(file);
  const metadata = await hyparquet.parquetMetadataAsync(buffer);
  const stats = {};
  for (const rg of metadata.row_groups)
    for (const col of rg.columns) {
      const name = col.meta_data.path_in_schema[0];
      const s = col.meta_data.statistics;
      if (!s || s.min_value === undefined) continue;
      (stats[name] ??= []).push([text(s.min_value), text(s.max_value)]);
    }
  // hyparquet decodes Snappy itself; GZIP comes from Node's zlib (ZSTD has no decoder in Node 20).
  const compressors = { GZIP: (input) => new Uint8Array(zlib.gunzipSync(input)) };
  try {
    entry.hyparquet = summarize(await hyparquet.parquetReadObjects({ file: buffer, compressors }));
    entry.hyparquet.statistics = stats;
  } catch (e) {
    entry.hyparquet = { error: String(e) };
  }
  if (duckdb) {
    try {
      const instance = await duckdb.DuckDBInstance.create(':memory:');
      const conn = await instance.connect();
      const reader = await conn.runAndReadAll(`SELECT * FROM read_parquet('${file.replaceAll("'", "''")}')`);
      const rows = reader.getRowObjectsJS();
      // DuckDB's JS values: lists as arrays, BIGINT as bigint; floats as numbers.
      entry.duckdb = summarize(rows);
    } catch (e) {
      entry.duckdb = { error: String(e) };
    }
  }
}
process.stdout.write(JSON.stringify(out));
