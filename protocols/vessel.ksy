# Vessel - Environment Protocol, described for lwarscope AS A FIXED-LAYOUT EXAMPLE.
#
# NOT VESSEL'S REAL FORMAT: the Vessel project sends protobuf (proto3), one
# message per datagram on UDP port 39461; lwarscope decodes that natively as
# protocol `vessel` (src/proto/vessel/, protocols/vessel.proto). This file is
# kept as an example of a fixed-layout description, protocol `vessel_fixed`.
#
# The specification (src/proto/described/vessel-protocol.md) names the fields
# and their behaviour but no bytes. THIS FILE DEFINES AN EXAMPLE BYTE LAYOUT:
# every field of the specification is here, in an order and with widths chosen
# for this example (big-endian, floats as IEEE-754 binary32). A real Vessel
# implementation may lay them out differently: change this file to match it.
#
# Checked by lwarscope's tests; it also loads in the Kaitai Web IDE (the
# `-lwarscope` key is ignored by Kaitai: keys starting with `-` are).
meta:
  id: vessel_fixed
  title: Vessel - Environment Protocol (fixed-layout example)
  endian: be
doc: |
  One packet per simulation step, each way. A vessel sends its input state;
  the environment answers with the input it applies, the sensor readings and
  the administrative state. Every packet carries the protocol version and a
  one-byte sync number.
seq:
  - id: version_len
    type: u1
    doc: Length of protocolVersion, in bytes.
  - id: protocol_version
    type: str
    size: version_len
    encoding: ASCII
    doc: protocolVersion, e.g. "1.0".
  - id: msg_type
    type: u1
    enum: msg_type
    doc: Which side sent the packet, and what it holds (example layout).
  - id: sync_number
    type: u1
    doc: syncNumber, +1 per packet sent, 255 wraps to 0.
  - id: body
    type:
      switch-on: msg_type
      cases:
        msg_type::vessel_input: vessel_input
        msg_type::environment_state: environment_state
types:
  vessel_input:
    seq:
      - id: has_vessel_id
        type: u1
        valid:
          any-of: [0, 1]
        doc: 1 when vesselID follows (omitted before the first join).
      - id: vessel_id
        type: u4
        if: has_vessel_id == 1
        doc: vesselID issued by the environment.
      - id: input
        type: ship_input
  environment_state:
    seq:
      - id: join_status
        type: u1
        valid:
          any-of: [0, 1]
        doc: joinStatus, a boolean.
      - id: has_vessel_id
        type: u1
        valid:
          any-of: [0, 1]
      - id: vessel_id
        type: u4
        if: has_vessel_id == 1
        doc: A new vesselID, sent until the vessel uses it.
      - id: input
        type: ship_input
        doc: The input the environment actually applies.
      - id: health
        type: s4
        doc: The ship's health.
      - id: object_count
        type: u1
      - id: objects
        type: sensor_object
        repeat: expr
        repeat-expr: object_count
        doc: Objects within sensor range, relative to the ship.
  ship_input:
    seq:
      - id: throttle_left
        type: f4
        valid:
          min: 0
          max: 1
      - id: throttle_right
        type: f4
        valid:
          min: 0
          max: 1
      - id: thrusters
        type: u1
        doc: The 8 thrusters, one bit each (bit 0 first).
      - id: gun_trigger
        type: u1
        valid:
          any-of: [0, 1]
        doc: Fire continuously while 1.
  sensor_object:
    seq:
      - id: object_type
        type: u1
        enum: object_type
        valid:
          any-of: [1, 2]
        doc: Ship or bullet; any other value breaks the enum.
      - id: pos_x
        type: f4
      - id: pos_y
        type: f4
      - id: orientation
        type: f4
        doc: Radians.
      - id: vel_x
        type: f4
      - id: vel_y
        type: f4
enums:
  msg_type:
    1: vessel_input
    2: environment_state
    3: version_only
  object_type:
    1: ship
    2: bullet
-lwarscope:
  title: Vessel (fixed-layout example)
  recognise:
    port: 7600
  session: address-pair
  server:
    port: 7600
    sends: [environment_state, version_only]
    receives: [vessel_input]
  message-type: msg_type
  sequence:
    field: sync_number
    recency:
      ahead: 128
  ack: none
  timeout: 5s
  rates:
    vessel_input: 30
    environment_state: 30
