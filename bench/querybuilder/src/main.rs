//! What building a statement costs per call: the store's `format!` of an
//! entity's table into fixed text, against sea-query building the same
//! statement and rendering it for SQLite and for PostgreSQL.
use sea_query::{Alias, Asterisk, Expr, PostgresQueryBuilder, Query, SqliteQueryBuilder};
use std::hint::black_box;
use std::time::Instant;

const N: u32 = 200_000;

fn time(name: &str, mut f: impl FnMut(u32) -> usize) {
    let mut rounds = Vec::new();
    for _ in 0..7 {
        let start = Instant::now();
        let mut n = 0;
        for i in 0..N {
            n += f(i);
        }
        black_box(n);
        rounds.push(start.elapsed().as_nanos() as f64 / N as f64);
    }
    rounds.sort_by(f64::total_cmp);
    println!("{name:<58} {:>7.0} ns per statement (median of 7 rounds of {N})", rounds[3]);
}

fn main() {
    let (table, live) = (black_box("pages"), black_box(" AND archive_id IS NULL"));
    time("select by id: format! (the store)", |_| {
        format!("SELECT * FROM {table} WHERE id = ?1 AND site_id = ?2 AND env = ?3{live}").len()
    });
    let select = |i: u32| {
        Query::select()
            .column(Asterisk)
            .from(Alias::new(table))
            .and_where(Expr::col(Alias::new("id")).eq(format!("p{i}")))
            .and_where(Expr::col(Alias::new("site_id")).eq("s"))
            .and_where(Expr::col(Alias::new("env")).eq("production"))
            .and_where(Expr::col(Alias::new("archive_id")).is_null())
            .take()
    };
    time("select by id: sea-query, built and rendered for SQLite", |i| select(i).build(SqliteQueryBuilder).0.len());
    time("select by id: sea-query, built and rendered for PostgreSQL", |i| {
        select(i).build(PostgresQueryBuilder).0.len()
    });
    time("update three columns under a version check: format!", |_| {
        format!("UPDATE {table} SET name = ?1, version = ?2, updated_at = ?3 WHERE id = ?4 AND version = ?5").len()
    });
    time("update three columns under a version check: sea-query (SQLite)", |i| {
        Query::update()
            .table(Alias::new(table))
            .values([
                (Alias::new("name"), format!("n{i}").into()),
                (Alias::new("version"), (i as i64).into()),
                (Alias::new("updated_at"), "2026-11-25T00:00:00Z".into()),
            ])
            .and_where(Expr::col(Alias::new("id")).eq("p"))
            .and_where(Expr::col(Alias::new("version")).eq(i as i64 - 1))
            .build(SqliteQueryBuilder)
            .0
            .len()
    });
}
