//! Capture front end: frames from libpcap to UDP datagrams.
