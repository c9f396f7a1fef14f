# Star Control: Timewarp network layout, described for lwarscope.
#
# The planning document (src/proto/described/timewarp-network-layout.html)
# names the messages and their fields but no bytes. THIS FILE DEFINES AN
# EXAMPLE BYTE LAYOUT: every message and field of the document, with widths
# chosen for this example (little-endian, floats as IEEE-754 binary32; a
# FLAG byte first, as the document says). The document has no packet
# sequence number, so lwarscope judges duplicates, layout, `valid` ranges,
# rates and timeouts, but no loss.
meta:
  id: timewarp
  title: Star Control Timewarp
  endian: le
seq:
  - id: flag
    type: u1
    enum: flag
    doc: FLAG, the message type.
  - id: body
    type:
      switch-on: flag
      cases:
        flag::ping_reply: ping_reply
        flag::initial_connection_request: initial_connection_request
        flag::initial_connection_response: initial_connection_response
        flag::confirmed_connection_request: confirmed_connection_request
        flag::confirmed_connection_response: confirmed_connection_response
        flag::confirmed_connection_check_request: checksums
        flag::update_game_data: update_game_data
types:
  ping_reply:
    seq:
      - id: players_in_game
        type: u1
      - id: max_players
        type: u1
      - id: game_type
        type: u1
      - id: name_len
        type: u1
      - id: server_name
        type: str
        size: name_len
        encoding: UTF-8
        doc: SERVER_INFO, kept small.
  initial_connection_request:
    seq:
      - id: version
        type: u2
      - id: game_type_count
        type: u1
      - id: game_types
        type: u1
        repeat: expr
        repeat-expr: game_type_count
        doc: Short ids of the game types and mods the client understands.
  initial_connection_response:
    seq:
      - id: id
        type: u2
        enum: response_id
        doc: The client's ID, or a special value refusing it.
      - id: desc_len
        type: u1
        if: id == response_id::response_unknown_game_type
      - id: game_type_desc
        type: str
        size: desc_len
        encoding: UTF-8
        if: id == response_id::response_unknown_game_type
        doc: |
          GAME_TYPE_DESC, only with RESPONSE_UNKNOWN_GAME_TYPE: the game
          type's name and where to get it. Any other ID is FLAG + ID alone.
  confirmed_connection_request:
    seq:
      - id: client_id
        type: u2
      - id: player_count
        type: u1
        valid:
          min: 1
          max: 4
      - id: players
        type: player_settings
        repeat: expr
        repeat-expr: player_count
  player_settings:
    seq:
      - id: name
        type: strz
        size: 16
        encoding: UTF-8
      - id: ship
        type: u1
  confirmed_connection_response:
    seq:
      - id: this_packet
        type: u1
        valid:
          min: 1
        doc: Game state chunk number, from 1 (packet 4 of 6).
      - id: total_packets
        type: u1
        valid:
          min: this_packet
        doc: Chunks of the game state; never below this_packet.
      - id: chunk_len
        type: u2
      - id: game_state
        size: chunk_len
        doc: Game-state information.
      - id: checksum
        type: u4
        if: this_packet == total_packets
        doc: In the last chunk, after its data; sum of all the game-state data.
      - id: crc
        type: u4
        if: this_packet == total_packets
  checksums:
    seq:
      - id: checksum
        type: u4
      - id: crc
        type: u4
  update_game_data:
    seq:
      - id: ship_count
        type: u1
      - id: ships
        type: ship_entry
        repeat: expr
        repeat-expr: ship_count
  ship_entry:
    seq:
      - id: update_flag
        type: u1
        valid:
          any-of: [0, 1]
      - id: ship_id
        type: u1
      - id: pos_x
        type: f4
      - id: pos_y
        type: f4
      - id: vel_x
        type: f4
      - id: vel_y
        type: f4
      - id: angle
        type: u1
        valid:
          max: 127
        doc: 0-127 (7 bits); the thrusting bit is in `flags`.
      - id: flags
        type: u1
        valid:
          max: 15
        doc: thrusting, primary active, secondary active, alive (bits 0-3).
      - id: crew
        type: u1
      - id: battery
        type: u1
      - id: target_id
        type: u1
        doc: 0 for no target.
      - id: reserved
        type: u2
enums:
  flag:
    1: ping_request
    2: ping_reply
    3: initial_connection_request
    4: initial_connection_response
    5: confirmed_connection_request
    6: confirmed_connection_response
    7: confirmed_connection_check_request
    8: confirmed_connection_check_response
    9: confirmed_connection_check_response_failed
    10: update_game_data
  response_id:
    65532: response_server_full
    65533: response_ping_too_high
    65534: response_unknown_game_type
    65535: response_piss_off
-lwarscope:
  title: Timewarp
  recognise:
    port: 7711
  server:
    port: 7711
    # "The server should not reply to an IP address that ends in 255 or 0";
    # "IP addresses ending in 0 or 255 are dropped" (IPv4).
    drops:
      ipv4-last-byte: [0, 255]
    # The document's arrows: who sends each message. UPDATE_GAME_DATA is the
    # server's updates; the document leaves open how a client sends its
    # events, so either side may send it.
    sends:
      - ping_reply
      - initial_connection_response
      - confirmed_connection_response
      - confirmed_connection_check_response
      - confirmed_connection_check_response_failed
    receives:
      - ping_request
      - initial_connection_request
      - confirmed_connection_request
      - confirmed_connection_check_request
  message-type: flag
  timeout: 10s
  rates:
    update_game_data: 10
  mtu: 548
