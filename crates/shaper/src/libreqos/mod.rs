//! LibreQoS's configuration files, read as LibreQoS writes and reads
//! them: `ShapedDevices.csv` (circuits and their devices, one device a
//! row) and `network.json` (the tree of sites and access points). Where
//! LibreQoS silently drops, caps or substitutes a value (an address that
//! does not parse, a zero rate, a child faster than its parent, rows of
//! one circuit with different rates), fairway refuses the file and says
//! where; `docs/shaper.md` lists each difference.

pub mod network_json;
pub mod shaped_devices;
