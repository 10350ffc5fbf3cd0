// The FPGA <-> ARM ring/register window of one Clio memory node (hand-written board logic).
//
// Layout: proto/src/ring.rs, docs/protocol.md section 6. Every offset below comes from
// clio_ring_regs.vh, which the flow generates with `clio-spec verilog-regs` (fpga/fpga.mk);
// nothing here retypes an offset.
//
//   ARM side   AXI4-Lite slave, 32-bit, from the PS's M_AXI_HPM0_FPD (the UIO window that
//              `clio-slowpath --uio /dev/uioN` maps with memmap2).
//   Fast path  two descriptor streams of 512-bit beats (CLIO_DESC_BYTES / 64 beats per
//              descriptor): ring_rx_* (fast path -> ARM, written into the RX ring, RX head
//              published after the last beat) and ring_tx_* (ARM -> fast path, read from the
//              TX ring while TX head != TX tail, TX tail advanced after the last beat).
//
// The register block is published at reset (magic, version, geometry): the daemon's
// RingWindow::open checks it. Only the ARM-owned registers (RX tail, TX head, daemon state,
// heartbeat) are writable from AXI; writes to the others are ignored.
//
// One clock (the 250 MHz core clock; the PS's HPM0 port runs on it too), synchronous
// active-high reset.
`timescale 1ns / 1ps
`default_nettype none

module clio_ring_window #(
    parameter [63:0] DRAM_BYTES = 64'd2147483648,
    parameter [31:0] PAGE_SHIFT = 32'd22,
    parameter [31:0] FIFO_DEPTH = 32'd32,
    parameter        AXI_ADDR_WIDTH = 17
) (
    input  wire                      clk,
    input  wire                      rst,

    // AXI4-Lite slave (ARM)
    input  wire [AXI_ADDR_WIDTH-1:0] s_axil_awaddr,
    input  wire                      s_axil_awvalid,
    output wire                      s_axil_awready,
    input  wire [31:0]               s_axil_wdata,
    input  wire [3:0]                s_axil_wstrb,
    input  wire                      s_axil_wvalid,
    output wire                      s_axil_wready,
    output wire [1:0]                s_axil_bresp,
    output reg                       s_axil_bvalid,
    input  wire                      s_axil_bready,
    input  wire [AXI_ADDR_WIDTH-1:0] s_axil_araddr,
    input  wire                      s_axil_arvalid,
    output wire                      s_axil_arready,
    output reg  [31:0]               s_axil_rdata,
    output wire [1:0]                s_axil_rresp,
    output reg                       s_axil_rvalid,
    input  wire                      s_axil_rready,

    // RX descriptors: fast path -> ARM
    input  wire                      ring_rx_tvalid,
    output wire                      ring_rx_tready,
    input  wire [511:0]              ring_rx_tdata,
    input  wire                      ring_rx_tlast,
    // free RX slots (the fast path keeps FIFO_DEPTH of them for PAGE_MAPPED notices)
    output wire [16:0]               ring_rx_free,

    // TX descriptors: ARM -> fast path
    output reg                       ring_tx_tvalid,
    input  wire                      ring_tx_tready,
    output reg  [511:0]              ring_tx_tdata,
    output reg                       ring_tx_tlast,

    // status for LEDs
    output wire [31:0]               daemon_state,
    output wire [31:0]               daemon_heartbeat,
    output reg                       desc_framing_error
);

`include "clio_ring_regs.vh"

    localparam ENTRIES     = CLIO_DEFAULT_RING_ENTRIES;
    localparam BEATS       = CLIO_DESC_BYTES / 64;            // 512-bit beats per descriptor
    localparam WORDS       = ENTRIES * BEATS;                  // 512-bit words per ring
    localparam WORD_BITS   = $clog2(WORDS);
    localparam BEAT_BITS   = (BEATS > 1) ? $clog2(BEATS) : 1;
    localparam SLOT_MASK   = ENTRIES - 1;

    initial begin
        if (CLIO_RX_BASE != CLIO_REGS_BYTES || CLIO_TX_BASE != CLIO_RX_BASE + ENTRIES * CLIO_DESC_BYTES
            || CLIO_WINDOW_BYTES != CLIO_TX_BASE + ENTRIES * CLIO_DESC_BYTES
            || (1 << AXI_ADDR_WIDTH) < CLIO_WINDOW_BYTES || CLIO_DESC_BYTES % 64 != 0) begin
            $display("clio_ring_window: clio_ring_regs.vh describes a layout this module does not implement");
            $finish;
        end
    end

    // ---------------- registers ----------------
    reg [31:0] rx_head, rx_tail, tx_head, tx_tail, state_r, heartbeat_r;
    assign daemon_state = state_r;
    assign daemon_heartbeat = heartbeat_r;

    wire [31:0] rx_used = rx_head - rx_tail;
    wire        rx_full = rx_used >= ENTRIES;
    assign ring_rx_free = ENTRIES - rx_used[16:0];

    // ---------------- ring RAMs (port A: AXI, port B: descriptor engine) ----------------
    (* ram_style = "block" *) reg [511:0] rx_ram [0:WORDS-1];
    (* ram_style = "block" *) reg [511:0] tx_ram [0:WORDS-1];
    // Block RAM powers up with this content after configuration (the rings start zeroed).
    integer z;
    initial for (z = 0; z < WORDS; z = z + 1) begin rx_ram[z] = 512'd0; tx_ram[z] = 512'd0; end

    // ---------------- AXI4-Lite write ----------------
    wire wr_fire = s_axil_awvalid && s_axil_wvalid && !s_axil_bvalid;
    assign s_axil_awready = wr_fire;
    assign s_axil_wready  = wr_fire;
    assign s_axil_bresp   = 2'b00;

    wire [AXI_ADDR_WIDTH-1:0] wa = {s_axil_awaddr[AXI_ADDR_WIDTH-1:2], 2'b00};
    wire wa_rx = wa >= CLIO_RX_BASE && wa < CLIO_TX_BASE;
    wire wa_tx = wa >= CLIO_TX_BASE && wa < CLIO_WINDOW_BYTES;
    wire [AXI_ADDR_WIDTH-1:0] wa_rx_off = wa - CLIO_RX_BASE;
    wire [AXI_ADDR_WIDTH-1:0] wa_tx_off = wa - CLIO_TX_BASE;
    wire [WORD_BITS-1:0] wa_rx_word = wa_rx_off[WORD_BITS+5:6];
    wire [WORD_BITS-1:0] wa_tx_word = wa_tx_off[WORD_BITS+5:6];
    wire [3:0] wa_lane = wa[5:2];

    function [31:0] merge32(input [31:0] old, input [31:0] d, input [3:0] strb);
        integer b;
        begin
            for (b = 0; b < 4; b = b + 1)
                merge32[8*b +: 8] = strb[b] ? d[8*b +: 8] : old[8*b +: 8];
        end
    endfunction

    // Port A of each ring RAM is shared by AXI writes and reads (a read is accepted only in a
    // cycle without a write), port B belongs to the descriptor engine: two ports per RAM, so
    // both map onto true-dual-port block RAM with byte write enables.
    wire [63:0]  wa_bytes = {60'd0, s_axil_wstrb} << (4 * wa_lane);
    wire [511:0] wa_data  = {16{s_axil_wdata}};
    wire [WORD_BITS-1:0] ar_rx_word, ar_tx_word;
    wire [WORD_BITS-1:0] pa_rx_word = wr_fire ? wa_rx_word : ar_rx_word;
    wire [WORD_BITS-1:0] pa_tx_word = wr_fire ? wa_tx_word : ar_tx_word;
    reg  [511:0] rx_rd_q, tx_rd_q;

    integer i, j;
    always @(posedge clk) begin
        for (i = 0; i < 64; i = i + 1)
            if (wr_fire && wa_rx && wa_bytes[i]) rx_ram[pa_rx_word][8*i +: 8] <= wa_data[8*i +: 8];
        rx_rd_q <= rx_ram[pa_rx_word];
    end
    always @(posedge clk) begin
        for (j = 0; j < 64; j = j + 1)
            if (wr_fire && wa_tx && wa_bytes[j]) tx_ram[pa_tx_word][8*j +: 8] <= wa_data[8*j +: 8];
        tx_rd_q <= tx_ram[pa_tx_word];
    end

    // ---------------- descriptor engine: RX (fast path -> RX ring) ----------------
    reg [BEAT_BITS-1:0] rx_beat;
    assign ring_rx_tready = !rx_full && !rst;
    wire rx_fire = ring_rx_tvalid && ring_rx_tready;
    wire [WORD_BITS-1:0] rx_word = (rx_head & SLOT_MASK) * BEATS + rx_beat;
    wire rx_last_beat = (rx_beat == BEATS - 1);

    always @(posedge clk) begin
        if (rx_fire) rx_ram[rx_word] <= ring_rx_tdata;
    end

    // ---------------- descriptor engine: TX (TX ring -> fast path) ----------------
    // One beat is read per BRAM access (read latency 1); beats leave through a one-entry
    // output register. The slow path's rate is far below this.
    reg [BEAT_BITS-1:0] tx_beat;
    reg                 tx_rd_pending;
    reg [511:0]         tx_ram_q;
    wire [WORD_BITS-1:0] tx_word = (tx_tail & SLOT_MASK) * BEATS + tx_beat;
    wire tx_avail = tx_head != tx_tail;
    wire tx_issue = tx_avail && !tx_rd_pending && !ring_tx_tvalid;
    wire tx_fire = ring_tx_tvalid && ring_tx_tready;

    always @(posedge clk) begin
        tx_ram_q <= tx_ram[tx_word];
    end

    // ---------------- register state ----------------
    always @(posedge clk) begin
        if (rst) begin
            rx_head <= 0; rx_tail <= 0; tx_head <= 0; tx_tail <= 0;
            state_r <= 0; heartbeat_r <= 0;
            rx_beat <= 0; tx_beat <= 0; tx_rd_pending <= 1'b0;
            ring_tx_tvalid <= 1'b0; ring_tx_tlast <= 1'b0; ring_tx_tdata <= 512'd0;
            desc_framing_error <= 1'b0;
            s_axil_bvalid <= 1'b0;
        end else begin
            if (wr_fire) s_axil_bvalid <= 1'b1;
            else if (s_axil_bready) s_axil_bvalid <= 1'b0;
            // ARM-owned registers
            if (wr_fire) begin
                case (wa)
                    CLIO_REG_RX_TAIL:          rx_tail     <= merge32(rx_tail, s_axil_wdata, s_axil_wstrb);
                    CLIO_REG_TX_HEAD:          tx_head     <= merge32(tx_head, s_axil_wdata, s_axil_wstrb);
                    CLIO_REG_DAEMON_STATE:     state_r     <= merge32(state_r, s_axil_wdata, s_axil_wstrb);
                    CLIO_REG_DAEMON_HEARTBEAT: heartbeat_r <= merge32(heartbeat_r, s_axil_wdata, s_axil_wstrb);
                    default: ;
                endcase
            end
            // RX: publish the head after the descriptor's last beat is written
            if (rx_fire) begin
                if (ring_rx_tlast != rx_last_beat) desc_framing_error <= 1'b1;
                if (rx_last_beat) begin
                    rx_beat <= 0;
                    rx_head <= rx_head + 1;
                end else begin
                    rx_beat <= rx_beat + 1'b1;
                end
            end
            // TX: read a beat, present it, advance the tail after the last beat leaves
            if (tx_issue) tx_rd_pending <= 1'b1;
            if (tx_rd_pending) begin
                tx_rd_pending  <= 1'b0;
                ring_tx_tvalid <= 1'b1;
                ring_tx_tdata  <= tx_ram_q;
                ring_tx_tlast  <= (tx_beat == BEATS - 1);
            end
            if (tx_fire) begin
                ring_tx_tvalid <= 1'b0;
                if (ring_tx_tlast) begin
                    tx_beat <= 0;
                    tx_tail <= tx_tail + 1;
                end else begin
                    tx_beat <= tx_beat + 1'b1;
                end
            end
        end
    end

    // ---------------- AXI4-Lite read (one outstanding read, latency 2) ----------------
    reg                      rd_pending;
    reg [AXI_ADDR_WIDTH-1:0] ra;
    assign s_axil_arready = !rd_pending && !s_axil_rvalid && !wr_fire && !rst;
    assign s_axil_rresp   = 2'b00;
    wire ar_fire = s_axil_arvalid && s_axil_arready;
    wire [AXI_ADDR_WIDTH-1:0] ar_rx_off = s_axil_araddr - CLIO_RX_BASE;
    wire [AXI_ADDR_WIDTH-1:0] ar_tx_off = s_axil_araddr - CLIO_TX_BASE;

    assign ar_rx_word = ar_rx_off[WORD_BITS+5:6];
    assign ar_tx_word = ar_tx_off[WORD_BITS+5:6];

    function [31:0] reg_value(input [AXI_ADDR_WIDTH-1:0] a);
        begin
            case (a)
                CLIO_REG_MAGIC:            reg_value = CLIO_RING_MAGIC;
                CLIO_REG_VERSION:          reg_value = CLIO_RING_VERSION;
                CLIO_REG_ENTRIES:          reg_value = ENTRIES;
                CLIO_REG_DESC_BYTES:       reg_value = CLIO_DESC_BYTES;
                CLIO_REG_DRAM_BYTES:       reg_value = DRAM_BYTES[31:0];
                CLIO_REG_DRAM_BYTES + 4:   reg_value = DRAM_BYTES[63:32];
                CLIO_REG_PAGE_SHIFT:       reg_value = PAGE_SHIFT;
                CLIO_REG_FIFO_DEPTH:       reg_value = FIFO_DEPTH;
                CLIO_REG_RX_HEAD:          reg_value = rx_head;
                CLIO_REG_RX_TAIL:          reg_value = rx_tail;
                CLIO_REG_TX_HEAD:          reg_value = tx_head;
                CLIO_REG_TX_TAIL:          reg_value = tx_tail;
                CLIO_REG_DAEMON_STATE:     reg_value = state_r;
                CLIO_REG_DAEMON_HEARTBEAT: reg_value = heartbeat_r;
                default:                   reg_value = 32'd0;
            endcase
        end
    endfunction

    always @(posedge clk) begin
        if (rst) begin
            rd_pending <= 1'b0;
            s_axil_rvalid <= 1'b0;
            s_axil_rdata <= 32'd0;
            ra <= 0;
        end else begin
            if (ar_fire) begin
                rd_pending <= 1'b1;
                ra <= {s_axil_araddr[AXI_ADDR_WIDTH-1:2], 2'b00};
            end
            if (rd_pending) begin
                rd_pending <= 1'b0;
                s_axil_rvalid <= 1'b1;
                if (ra < CLIO_REGS_BYTES)      s_axil_rdata <= reg_value(ra);
                else if (ra < CLIO_TX_BASE)    s_axil_rdata <= rx_rd_q[32*ra[5:2] +: 32];
                else if (ra < CLIO_WINDOW_BYTES) s_axil_rdata <= tx_rd_q[32*ra[5:2] +: 32];
                else                           s_axil_rdata <= 32'd0;
            end
            if (s_axil_rvalid && s_axil_rready) s_axil_rvalid <= 1'b0;
        end
    end

endmodule

`default_nettype wire
