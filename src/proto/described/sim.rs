//! Capture generators for the shipped example layouts (Vessel, Timewarp).
