//! Route check: the amplification bound (`clio_proto::route_cookie`). A request whose answer
//! can exceed twice its size must carry the route cookie of its source address; the fast path
//! answers it `RouteUnverified` otherwise, right after the key check and before anything
//! executes.
//!
//! The model of `hw/src/fastpath/route_check.rs`: off (every request passes) until the slow
//! path's `ROUTE_KEY` gives it the node's secret.

use clio_proto::frame::Route;
use clio_proto::route_cookie::{cookie_of_message, needs_route_cookie, route_message, RouteSecret};
use clio_proto::Header;

/// The route check's state: the node's secret, once the slow path set it.
#[derive(Debug, Clone, Default)]
pub struct RouteCheck {
    secret: Option<RouteSecret>,
    /// The last address checked and its cookie (as the RTL's one-entry cache: a host's
    /// requests cost one SipHash, not one each; answers never depend on it).
    last: Option<(u64, u32)>,
    /// Requests refused.
    pub refused: u64,
}

impl RouteCheck {
    /// The slow path's `ROUTE_KEY`: check cookies under `secret` from now on.
    pub fn set_secret(&mut self, secret: RouteSecret) {
        self.secret = Some(secret);
        self.last = None;
    }

    /// The secret in force, if any.
    pub fn secret(&self) -> Option<RouteSecret> {
        self.secret
    }

    fn cookie_of(&mut self, s: &RouteSecret, message: u64) -> u32 {
        match self.last {
            Some((m, c)) if m == message => c,
            _ => {
                let c = cookie_of_message(s, message);
                self.last = Some((message, c));
                c
            }
        }
    }

    /// Whether the request, received along `route`, may draw its answer; counts refusals.
    pub fn admit(&mut self, h: &Header, route: &Route) -> bool {
        let ok = match self.secret {
            None => true,
            Some(_) if !needs_route_cookie(h.opcode, h.total_len) => true,
            Some(s) => h.cookie == self.cookie_of(&s, route_message(route)),
        };
        if !ok {
            self.refused += 1;
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clio_proto::route_cookie::FREE_ANSWER_BYTES;
    use clio_proto::Opcode;

    #[test]
    fn long_answers_need_the_cookie_of_their_source_once_there_is_a_secret() {
        let mut c = RouteCheck::default();
        let me = Route::udp("10.0.0.1:7".parse().unwrap(), "10.0.0.9:9".parse().unwrap());
        let victim = Route::udp("10.0.0.2:7".parse().unwrap(), "10.0.0.9:9".parse().unwrap());
        let mut read = Header::request(Opcode::Read, 3, 1, 0x1000);
        read.total_len = FREE_ANSWER_BYTES + 1;
        assert!(c.admit(&read, &victim), "off until ROUTE_KEY");
        let s = RouteSecret([11, 22]);
        c.set_secret(s);
        assert!(!c.admit(&read, &me), "no cookie");
        let mine = read.with_cookie(clio_proto::route_cookie::route_cookie(&s, &me));
        assert!(c.admit(&mine, &me));
        assert!(!c.admit(&mine, &victim), "my cookie, the victim's address");
        let mut short = read;
        short.total_len = FREE_ANSWER_BYTES;
        assert!(c.admit(&short, &victim), "twice the request at most: free");
        let kv = Header::request(Opcode::KvGet, 3, 2, 0);
        assert!(!c.admit(&kv, &victim));
        let write = Header::request(Opcode::Write, 3, 3, 0x1000);
        assert!(c.admit(&write, &victim));
        assert_eq!(c.refused, 3);
    }
}
