//! `quire migrate`, `seed`, `export` and `import`: the database as a whole.

use super::AnyResult;
use crate::config::Config;
use crate::services::{DataDir, Existing, seed as seed_demo};
use quire_store::seed::seed_bench;
use std::path::PathBuf;

/// Creates the database if needed and applies the migrations.
pub async fn migrate(data: &DataDir) -> AnyResult {
    let store = data.open_or_create().await?;
    let n = store.migrate().await?;
    outln!("database {} is at migration {n}", data.database())?;
    Ok(())
}

/// Seeds the demo site (idempotent), with benchmark pages and posts if asked.
pub async fn seed(bench_pages: usize, bench_posts: usize, config: &Config, data: &DataDir) -> AnyResult {
    let store = data.open_or_create().await?;
    let report = seed_demo(&store, &data.path, config).await?;
    outln!("demo site seeded: {} records created", report.created)?;
    if bench_pages + bench_posts > 0 {
        let scope = report.scope.ok_or("demo site has no production scope")?;
        seed_bench(&store, &scope, bench_pages, bench_posts).await?;
        outln!("benchmark data: {bench_pages} pages, {bench_posts} posts")?;
    }
    Ok(())
}

/// Writes the whole database as JSON lines to `out` (default: stdout).
pub async fn export(out: Option<PathBuf>, data: &DataDir) -> AnyResult {
    let store = data.open_existing(Existing::Database).await?;
    let report = match &out {
        Some(path) => {
            let file = std::fs::File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
            store.export(&mut std::io::BufWriter::new(file)).await?
        }
        None => store.export(&mut std::io::BufWriter::new(std::io::stdout().lock())).await?,
    };
    eprintln!("exported {} rows of {} tables", report.rows, report.tables);
    Ok(())
}

/// Reads an export (`-`: stdin) into a new, empty database.
pub async fn import(file: PathBuf, data: &DataDir) -> AnyResult {
    let mut input: Box<dyn std::io::BufRead> = if file.as_os_str() == "-" {
        Box::new(std::io::BufReader::new(std::io::stdin()))
    } else {
        let f = std::fs::File::open(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        Box::new(std::io::BufReader::new(f))
    };
    let store = data.open_or_create().await?;
    let report = store.import(&mut *input).await?;
    outln!("imported {} rows of {} tables into {}", report.rows, report.tables, data.database())?;
    Ok(())
}
