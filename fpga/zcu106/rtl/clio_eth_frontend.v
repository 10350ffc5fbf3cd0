// Network front end of the board: Ethernet frames (from/to the 10G MAC, FCS stripped/added by
// the MAC, 512-bit beats, byte k at bits 8k+7:8k) <-> the fast path's Clio packets with a
// route (proto::frame::Route::to_bytes layout, rx_route/tx_route of fastpath_top).
// Hand-written. Route offsets, encapsulation codes, EtherType and UDP port come from
// clio_board_cfg.vh, generated from clio-proto (fpga/scripts/board_cfg.rs).
//
//   clio_eth_rx  accepts Ethernet/IPv4/UDP to CLIO_UDP_PORT (IHL 5, not fragmented) and raw
//                frames of EtherType CLIO_ETHERTYPE, strips the 42 / 14 header bytes
//                (realigning the payload to byte 0 of each beat) and hands out the route with
//                every beat of the packet; any other frame is consumed and counted, not passed.
//   clio_eth_tx  store and forward (one frame of up to TX_BEATS beats): collects the packet,
//                then sends the header built from the route (the peer becomes the
//                destination; IPv4 total length, header checksum; UDP checksum 0, which IPv4
//                allows) followed by the packet.
`timescale 1ns / 1ps
`default_nettype none

module clio_eth_rx (
    input  wire         clk,
    input  wire         rst,
    input  wire         s_tvalid,
    output wire         s_tready,
    input  wire [511:0] s_tdata,
    input  wire [63:0]  s_tkeep,
    input  wire         s_tlast,
    output reg          m_tvalid,
    input  wire         m_tready,
    output reg  [511:0] m_tdata,
    output reg  [63:0]  m_tkeep,
    output reg          m_tlast,
    output reg  [255:0] m_route,
    output reg  [31:0]  dropped
);
`include "clio_board_cfg.vh"
    localparam H_UDP = 42, H_RAW = 14;
    localparam FIRST = 2'd0, PASS = 2'd1, FLUSH = 2'd2, DROP = 2'd3;

    function [7:0] b(input [511:0] d, input integer k); b = d[8*k +: 8]; endfunction

    // classification of a first beat
    wire [15:0] ethertype = {b(s_tdata, 12), b(s_tdata, 13)};
    wire        is_raw = ethertype == CLIO_ETHERTYPE;
    wire        is_ip  = ethertype == 16'h0800 && b(s_tdata, 14) == 8'h45 && b(s_tdata, 23) == 8'd17
                         && ({b(s_tdata, 20), b(s_tdata, 21)} & 16'h3fff) == 16'd0;
    wire        is_udp = is_ip && {b(s_tdata, 36), b(s_tdata, 37)} == CLIO_UDP_PORT;
    wire        long_enough = is_udp ? s_tkeep[H_UDP] : s_tkeep[H_RAW];

    reg [255:0] route_in;
    integer i;
    always @* begin
        route_in = 256'd0;
        route_in[8*CLIO_ROUTE_ENCAP +: 8] = is_udp ? CLIO_ENCAP_UDP : CLIO_ENCAP_RAW;
        for (i = 0; i < 6; i = i + 1) begin
            route_in[8*(CLIO_ROUTE_PEER_MAC + i) +: 8]  = b(s_tdata, 6 + i);
            route_in[8*(CLIO_ROUTE_LOCAL_MAC + i) +: 8] = b(s_tdata, i);
        end
        if (is_udp) begin
            for (i = 0; i < 4; i = i + 1) begin
                route_in[8*(CLIO_ROUTE_PEER_IP + i) +: 8]  = b(s_tdata, 26 + i);
                route_in[8*(CLIO_ROUTE_LOCAL_IP + i) +: 8] = b(s_tdata, 30 + i);
            end
            for (i = 0; i < 2; i = i + 1) begin
                route_in[8*(CLIO_ROUTE_PEER_PORT + i) +: 8]  = b(s_tdata, 34 + i);
                route_in[8*(CLIO_ROUTE_LOCAL_PORT + i) +: 8] = b(s_tdata, 36 + i);
            end
        end
    end

    reg [1:0]   state;
    reg         udp;              // header length of the current frame: 42 (UDP) or 14 (raw)
    reg [511:0] prev;
    reg [63:0]  prev_keep;
    reg [255:0] route;

    // payload bytes H.. of `lo` followed by bytes 0..H-1 of `hi`
    function [511:0] join_d(input u, input [511:0] lo, input [511:0] hi);
        join_d = u ? {hi[8*H_UDP-1:0], lo[511:8*H_UDP]} : {hi[8*H_RAW-1:0], lo[511:8*H_RAW]};
    endfunction
    function [63:0] join_k(input u, input [63:0] lo, input [63:0] hi);
        join_k = u ? {hi[H_UDP-1:0], lo[63:H_UDP]} : {hi[H_RAW-1:0], lo[63:H_RAW]};
    endfunction

    wire can_out = !m_tvalid || m_tready;
    assign s_tready = !rst && (state == DROP || (state != FLUSH && can_out));
    wire fire = s_tvalid && s_tready;
    // the last input beat still holds payload bytes past the joined output beat
    wire spill = udp ? (s_tkeep[63:H_UDP] != 0) : (s_tkeep[63:H_RAW] != 0);

    always @(posedge clk) begin
        if (rst) begin
            state <= FIRST; m_tvalid <= 1'b0; dropped <= 32'd0;
            udp <= 1'b0; prev <= 512'd0; prev_keep <= 64'd0; route <= 256'd0;
            m_tdata <= 512'd0; m_tkeep <= 64'd0; m_tlast <= 1'b0; m_route <= 256'd0;
        end else begin
            if (m_tvalid && m_tready) m_tvalid <= 1'b0;
            case (state)
                FIRST: if (fire) begin
                    if (!(is_raw || is_udp) || (s_tlast && !long_enough)) begin
                        dropped <= dropped + 1;
                        if (!s_tlast) state <= DROP;
                    end else begin
                        udp <= is_udp; prev <= s_tdata; prev_keep <= s_tkeep; route <= route_in;
                        if (s_tlast) begin
                            m_tvalid <= 1'b1; m_tlast <= 1'b1; m_route <= route_in;
                            m_tdata <= join_d(is_udp, s_tdata, 512'd0);
                            m_tkeep <= join_k(is_udp, s_tkeep, 64'd0);
                        end else begin
                            state <= PASS;
                        end
                    end
                end
                PASS: if (fire) begin
                    m_tvalid <= 1'b1; m_route <= route;
                    m_tdata <= join_d(udp, prev, s_tdata);
                    m_tkeep <= join_k(udp, prev_keep, s_tkeep);
                    prev <= s_tdata; prev_keep <= s_tkeep;
                    m_tlast <= s_tlast && !spill;
                    if (s_tlast) state <= spill ? FLUSH : FIRST;
                end
                FLUSH: if (can_out) begin
                    m_tvalid <= 1'b1; m_tlast <= 1'b1; m_route <= route;
                    m_tdata <= join_d(udp, prev, 512'd0);
                    m_tkeep <= join_k(udp, prev_keep, 64'd0);
                    state <= FIRST;
                end
                DROP: if (fire && s_tlast) state <= FIRST;
            endcase
        end
    end
endmodule

module clio_eth_tx #(
    parameter TX_BEATS = 32            // largest packet: TX_BEATS * 64 bytes (Clio: a 64-byte
                                       // header + 1024 payload = 1088 bytes, 17 beats)
) (
    input  wire         clk,
    input  wire         rst,
    input  wire         s_tvalid,
    output wire         s_tready,
    input  wire [511:0] s_tdata,
    input  wire [63:0]  s_tkeep,
    input  wire         s_tlast,
    input  wire [255:0] s_route,
    output reg          m_tvalid,
    input  wire         m_tready,
    output reg  [511:0] m_tdata,
    output reg  [63:0]  m_tkeep,
    output reg          m_tlast,
    output reg  [31:0]  dropped
);
`include "clio_board_cfg.vh"
    localparam H_UDP = 42, H_RAW = 14;
    localparam AW = $clog2(TX_BEATS);
    localparam CAPTURE = 2'd0, HEADER = 2'd1, EMIT = 2'd2, SKIP = 2'd3;

    reg [511:0] buffer [0:TX_BEATS-1];
    reg [1:0]   state;
    reg [AW:0]  wptr, rptr, nout;
    reg         first;
    reg [255:0] route;
    reg [11:0]  plen;                 // packet bytes
    reg [11:0]  flen;                 // frame bytes (header + packet)
    reg [8*H_UDP-1:0] hdr;
    reg         udp;
    reg [511:0] prev;

    function [7:0] rb(input [255:0] r, input integer k); rb = r[8*k +: 8]; endfunction
    function [6:0] count_keep(input [63:0] k);
        integer j;
        begin
            count_keep = 0;
            for (j = 0; j < 64; j = j + 1) count_keep = count_keep + k[j];
        end
    endfunction

    assign s_tready = !rst && (state == CAPTURE || state == SKIP);
    wire fire_in = s_tvalid && s_tready;
    wire [7:0] encap_in = s_route[8*CLIO_ROUTE_ENCAP +: 8];

    // IPv4 header checksum over the header built from `route` and `plen`
    wire [15:0] ip_total = 16'd28 + plen;
    wire [31:0] sum0 = 32'h4500 + ip_total + 32'h4000 + 32'h4011
        + {rb(route, CLIO_ROUTE_LOCAL_IP), rb(route, CLIO_ROUTE_LOCAL_IP + 1)}
        + {rb(route, CLIO_ROUTE_LOCAL_IP + 2), rb(route, CLIO_ROUTE_LOCAL_IP + 3)}
        + {rb(route, CLIO_ROUTE_PEER_IP), rb(route, CLIO_ROUTE_PEER_IP + 1)}
        + {rb(route, CLIO_ROUTE_PEER_IP + 2), rb(route, CLIO_ROUTE_PEER_IP + 3)};
    wire [31:0] sum1 = sum0[15:0] + sum0[31:16];
    wire [15:0] ip_csum = ~(sum1[15:0] + sum1[31:16]);
    wire [15:0] udp_len = 16'd8 + plen;

    reg [8*H_UDP-1:0] hdr_next;
    integer i;
    always @* begin
        hdr_next = 0;
        for (i = 0; i < 6; i = i + 1) begin
            hdr_next[8*i +: 8]       = rb(route, CLIO_ROUTE_PEER_MAC + i);   // destination
            hdr_next[8*(6 + i) +: 8] = rb(route, CLIO_ROUTE_LOCAL_MAC + i);  // source
        end
        if (udp) begin
            {hdr_next[8*12 +: 8], hdr_next[8*13 +: 8]} = 16'h0800;
            hdr_next[8*14 +: 8] = 8'h45;
            {hdr_next[8*16 +: 8], hdr_next[8*17 +: 8]} = ip_total;
            hdr_next[8*20 +: 8] = 8'h40;                                      // DF
            hdr_next[8*22 +: 8] = 8'd64;                                      // TTL
            hdr_next[8*23 +: 8] = 8'd17;                                      // UDP
            {hdr_next[8*24 +: 8], hdr_next[8*25 +: 8]} = ip_csum;
            for (i = 0; i < 4; i = i + 1) begin
                hdr_next[8*(26 + i) +: 8] = rb(route, CLIO_ROUTE_LOCAL_IP + i);
                hdr_next[8*(30 + i) +: 8] = rb(route, CLIO_ROUTE_PEER_IP + i);
            end
            for (i = 0; i < 2; i = i + 1) begin
                hdr_next[8*(34 + i) +: 8] = rb(route, CLIO_ROUTE_LOCAL_PORT + i);
                hdr_next[8*(36 + i) +: 8] = rb(route, CLIO_ROUTE_PEER_PORT + i);
            end
            {hdr_next[8*38 +: 8], hdr_next[8*39 +: 8]} = udp_len;
        end else begin
            {hdr_next[8*12 +: 8], hdr_next[8*13 +: 8]} = CLIO_ETHERTYPE;
        end
    end

    // output beat `rptr`: header + packet bytes shifted right by the header length
    wire [511:0] cur = (rptr < wptr) ? buffer[rptr[AW-1:0]] : 512'd0;
    wire [511:0] beat = (rptr == 0)
        ? (udp ? {cur[8*(64-H_UDP)-1:0], hdr[8*H_UDP-1:0]} : {cur[8*(64-H_RAW)-1:0], hdr[8*H_RAW-1:0]})
        : (udp ? {cur[8*(64-H_UDP)-1:0], prev[511:8*(64-H_UDP)]} : {cur[8*(64-H_RAW)-1:0], prev[511:8*(64-H_RAW)]});
    wire        last_beat = (rptr == nout - 1);
    wire [6:0]  tail_bytes = flen - 64 * (nout - 1);
    wire [63:0] tail_keep = (tail_bytes == 7'd64) ? {64{1'b1}} : ((64'd1 << tail_bytes) - 1);
    wire can_out = !m_tvalid || m_tready;

    always @(posedge clk) begin
        if (fire_in && state == CAPTURE && wptr < TX_BEATS) buffer[wptr[AW-1:0]] <= s_tdata;
    end

    always @(posedge clk) begin
        if (rst) begin
            state <= CAPTURE; wptr <= 0; rptr <= 0; nout <= 0; first <= 1'b1; route <= 256'd0;
            plen <= 12'd0; flen <= 12'd0; hdr <= 0; udp <= 1'b0; prev <= 512'd0;
            m_tvalid <= 1'b0; m_tdata <= 512'd0; m_tkeep <= 64'd0; m_tlast <= 1'b0; dropped <= 32'd0;
        end else begin
            if (m_tvalid && m_tready) m_tvalid <= 1'b0;
            case (state)
                CAPTURE: if (fire_in) begin
                    if (first) begin
                        route <= s_route;
                        udp <= encap_in == CLIO_ENCAP_UDP;
                    end
                    first <= s_tlast;
                    if (wptr == TX_BEATS || (first && encap_in != CLIO_ENCAP_UDP && encap_in != CLIO_ENCAP_RAW)) begin
                        // too long for the buffer, or no known encapsulation: drop the packet
                        dropped <= dropped + 1;
                        wptr <= 0;
                        if (!s_tlast) begin state <= SKIP; first <= 1'b0; end
                    end else begin
                        wptr <= wptr + 1'b1;
                        if (s_tlast) begin
                            plen <= 64 * wptr + count_keep(s_tkeep);
                            state <= HEADER;
                        end
                    end
                end
                SKIP: if (fire_in && s_tlast) begin state <= CAPTURE; first <= 1'b1; end
                HEADER: begin
                    hdr <= hdr_next;
                    flen <= plen + (udp ? H_UDP : H_RAW);
                    nout <= (plen + (udp ? H_UDP : H_RAW) + 63) / 64;
                    rptr <= 0;
                    state <= EMIT;
                end
                EMIT: if (can_out) begin
                    m_tvalid <= 1'b1; m_tdata <= beat; m_tlast <= last_beat;
                    m_tkeep <= last_beat ? tail_keep : {64{1'b1}};
                    prev <= cur;
                    rptr <= rptr + 1'b1;
                    if (last_beat) begin state <= CAPTURE; wptr <= 0; end
                end
            endcase
        end
    end
endmodule

`default_nettype wire
