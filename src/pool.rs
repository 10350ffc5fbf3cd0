//! `clio pool`: an operator's look at a pool of memory nodes kept in etcd
//! (docs/replication.md, "The configuration manager"): its view (epoch, nodes out of service)
//! and its announced nodes, and the two changes an operator makes: drain a node (out) and put
//! it back (in). Every client of the pool acts on a change as soon as etcd's watch reports it.

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use clio_clib::Pool;
use clio_confmgr::EtcdStore;
use std::net::SocketAddr;

/// Where the pool is.
#[derive(Args, Debug)]
pub struct PoolAt {
    /// etcd client address of the pool's configuration manager.
    #[arg(long, default_value = "127.0.0.1:2379")]
    etcd: SocketAddr,
    /// The pool's name (`clio board --pool NAME`).
    #[arg(long)]
    pool: String,
}

/// `clio pool` subcommands.
#[derive(Subcommand, Debug)]
pub enum PoolCmd {
    /// Print the pool's view (epoch, nodes out of service), its announced nodes and its
    /// clients with the epoch each follows (one behind the view has not seen a change yet).
    Show(PoolAt),
    /// Take a node out of service (drain it): clients fail its regions over and re-replicate
    /// them on other nodes.
    Out {
        #[command(flatten)]
        at: PoolAt,
        /// The node, as announced (IP:PORT).
        node: SocketAddr,
    },
    /// Put a node back in service: clients readmit it with a fresh address space.
    In {
        #[command(flatten)]
        at: PoolAt,
        /// The node, as announced (IP:PORT).
        node: SocketAddr,
    },
}

fn pool(at: &PoolAt) -> Pool {
    Pool {
        store: EtcdStore::new(at.etcd),
        name: at.pool.clone(),
    }
}

/// Run one `clio pool` subcommand.
pub fn run(c: PoolCmd) -> Result<()> {
    match c {
        PoolCmd::Show(at) => {
            let p = pool(&at);
            let ctx = || format!("reading pool {} at etcd {}", at.pool, at.etcd);
            let v = p.view().with_context(ctx)?;
            let nodes = p.announced().with_context(ctx)?;
            println!("pool {} (etcd {}): epoch {}", at.pool, at.etcd, v.epoch);
            println!("| node | announced capacity | in service |\n|---|---|---|");
            for (addr, cap, _) in &nodes {
                let state = if v.out.contains(addr) { "out" } else { "yes" };
                println!("| {addr} | {} | {state} |", crate::units::human(*cap));
            }
            for addr in v.out.iter().filter(|a| !nodes.iter().any(|n| n.0 == **a)) {
                println!("| {addr} | (not announced) | out |");
            }
            if nodes.is_empty() {
                println!(
                    "(no node announced: start one with `clio board --etcd {} --pool {}`)",
                    at.etcd, at.pool
                );
            }
            let clients = p.clients().with_context(ctx)?;
            println!("\n| client | follows epoch |\n|---|---|");
            for (id, epoch) in &clients {
                let behind = if *epoch < v.epoch { " (behind)" } else { "" };
                println!("| {id} | {epoch}{behind} |");
            }
            if clients.is_empty() {
                println!("(no client of the pool is connected)");
            }
            Ok(())
        }
        PoolCmd::Out { at, node } => change(&at, node, true),
        PoolCmd::In { at, node } => change(&at, node, false),
    }
}

/// Take `node` out of service (`out`) or put it back, and say what the pool now holds.
fn change(at: &PoolAt, node: SocketAddr, out: bool) -> Result<()> {
    let p = pool(at);
    let (v, what) = if out {
        (p.take_out(node), "out of service")
    } else {
        (p.bring_in(node), "in service")
    };
    let v = v.with_context(|| format!("putting {node} {what} in pool {}", at.pool))?;
    println!("{node} is {what} in pool {} (epoch {})", at.pool, v.epoch);
    Ok(())
}
