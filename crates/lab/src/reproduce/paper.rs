//! The papers `fairway reproduce` knows, their command-line names and
//! titles.

use super::error::ReproduceError;
use serde::Serialize;

/// A paper whose results can be reproduced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Paper {
    /// The QFQ+ paper: QFQ+ / SCHED+ (Checconi, Rizzo, Valente 2013).
    QfqPlus,
    /// The QFQ paper: QFQ (Checconi, Rizzo, Valente 2012/13).
    Qfq,
    /// The Eiffel paper: Eiffel (Saeed et al., NSDI 2019).
    Eiffel,
    /// The BFQ thesis, ch. 2: BFQ (Checconi's PhD thesis).
    Bfq,
    /// The PSPAT paper: PSPAT (Rizzo, Valente, Lettieri, Maffione 2018).
    Pspat,
}

impl Paper {
    /// Every paper, in report order.
    pub const ALL: [Paper; 5] = [
        Paper::QfqPlus,
        Paper::Qfq,
        Paper::Eiffel,
        Paper::Bfq,
        Paper::Pspat,
    ];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Paper::QfqPlus => "qfq-plus",
            Paper::Qfq => "qfq",
            Paper::Eiffel => "eiffel",
            Paper::Bfq => "bfq",
            Paper::Pspat => "pspat",
        }
    }

    /// The paper's title as it names itself.
    pub fn title(self) -> &'static str {
        match self {
            Paper::QfqPlus => "QFQ+ / SCHED+: reducing the cost of fair queueing",
            Paper::Qfq => "QFQ: efficient packet scheduling with tight guarantees",
            Paper::Eiffel => "Eiffel: efficient and flexible software packet scheduling",
            Paper::Bfq => "BFQ: proportional-share disk scheduling (Checconi's thesis, ch. 2)",
            Paper::Pspat => "PSPAT: software packet scheduling at hardware speed",
        }
    }

    /// Parses `qfq-plus` (or `qfq+`), `qfq`, `eiffel`, `bfq`, `pspat` or
    /// `all`. Also accepts, unlisted, `000`, `003`, `002`, `004` and `001`
    /// for the same five papers in that order (their former numbers in this
    /// repository).
    pub fn parse_list(text: &str) -> Result<Vec<Paper>, ReproduceError> {
        match text.trim() {
            "all" => Ok(Paper::ALL.to_vec()),
            "qfq-plus" | "qfq+" | "000" => Ok(vec![Paper::QfqPlus]),
            "qfq" | "003" => Ok(vec![Paper::Qfq]),
            "eiffel" | "002" => Ok(vec![Paper::Eiffel]),
            "bfq" | "004" => Ok(vec![Paper::Bfq]),
            "pspat" | "001" => Ok(vec![Paper::Pspat]),
            other => Err(ReproduceError::UnknownPaper(other.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_papers_and_rejects_unknown_names() {
        assert_eq!(Paper::parse_list("all").unwrap(), Paper::ALL.to_vec());
        assert_eq!(Paper::parse_list("003").unwrap(), vec![Paper::Qfq]);
        assert_eq!(Paper::parse_list("004").unwrap(), vec![Paper::Bfq]);
        assert_eq!(Paper::parse_list("pspat").unwrap(), vec![Paper::Pspat]);
        let err = Paper::parse_list("gps").unwrap_err().to_string();
        assert!(err.contains("'gps'"), "{err}");
        assert!(
            !err.contains("000"),
            "numbers are accepted, not listed: {err}"
        );
    }
}
