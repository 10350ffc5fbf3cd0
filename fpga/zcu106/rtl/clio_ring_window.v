// The FPGA <-> ARM ring/register window of one Clio memory node (hand-written board logic).
//
// Layout: proto/src/ring.rs, docs/protocol.md section 6. Every offset below comes from
// clio_ring_regs.vh, which the flow generates with `clio-spec verilog-regs` (fpga/fpga.mk);
// nothing here retypes an offset.
//
//   ARM side   AXI4-Lite slave, 32-bit, from the PS's M_AXI_HPM0_FPD (the UIO window that
//              `clio-slowpath --uio /dev/uioN` maps with memmap2).
//   Fast path  whole descriptors (CLIO_DESC_BYTES, byte k at bits 8k+7:8k, as fastpath_top's
//              sp_rx_desc / sp_tx_desc): sp_rx_* (fast path -> ARM: written into the RX ring,
//              RX head published in the same cycle), sp_rx_room (free RX slots), sp_rx_taken
//              (the RX tail's low 16 bits: descriptors the ARM took, for the per-source share), sp_tx_*
//              (ARM -> fast path: read from the TX ring while TX head != TX tail, TX tail
//              advanced when the fast path takes it).
//
// The register block is published at reset (magic, version, geometry): the daemon's
// RingWindow::open checks it. Only the ARM-owned registers (RX tail, TX head, daemon state,
// heartbeat, pool epoch) are writable from AXI; writes to the others are ignored.
//
// One clock (the 250 MHz core clock; the PS's HPM0 port runs on it too), synchronous
// active-high reset.
`timescale 1ns / 1ps
`default_nettype none

module clio_ring_window #(
    parameter [63:0] DRAM_BYTES = 64'd2147483648,
    parameter [31:0] PAGE_SHIFT = 32'd22,
    parameter [31:0] FIFO_DEPTH = 32'd32,
    parameter        AXI_ADDR_WIDTH = 17,
    parameter        DESC_BITS = 1024          // 8 * CLIO_DESC_BYTES (checked below)
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
    input  wire                      sp_rx_valid,
    output wire                      sp_rx_ready,
    input  wire [DESC_BITS-1:0]      sp_rx_desc,
    // free RX slots (the fast path keeps FIFO_DEPTH of them for PAGE_MAPPED notices)
    output wire [15:0]               sp_rx_room,
    // RX descriptors the ARM has taken (the RX tail, mod 2^16)
    output wire [15:0]               sp_rx_taken,

    // TX descriptors: ARM -> fast path
    output reg                       sp_tx_valid,
    input  wire                      sp_tx_ready,
    output reg  [DESC_BITS-1:0]      sp_tx_desc,

    // status for LEDs
    output wire [31:0]               daemon_state,
    output wire [31:0]               daemon_heartbeat
);

`include "clio_ring_regs.vh"

    localparam ENTRIES    = CLIO_DEFAULT_RING_ENTRIES;
    localparam SLOT_BITS  = $clog2(ENTRIES);
    localparam LANES      = CLIO_DESC_BYTES / 4;              // 32-bit AXI lanes per descriptor
    localparam LANE_BITS  = $clog2(LANES);
    localparam DESC_SHIFT = $clog2(CLIO_DESC_BYTES);

    initial begin
        if (CLIO_RX_BASE != CLIO_REGS_BYTES || CLIO_TX_BASE != CLIO_RX_BASE + ENTRIES * CLIO_DESC_BYTES
            || CLIO_WINDOW_BYTES != CLIO_TX_BASE + ENTRIES * CLIO_DESC_BYTES
            || (1 << AXI_ADDR_WIDTH) < CLIO_WINDOW_BYTES || DESC_BITS != 8 * CLIO_DESC_BYTES
            || (1 << DESC_SHIFT) != CLIO_DESC_BYTES || ENTRIES > 65535) begin
            $display("clio_ring_window: clio_ring_regs.vh describes a layout this module does not implement");
            $finish;
        end
    end

    // ---------------- registers ----------------
    reg [31:0] rx_head, rx_tail, tx_head, tx_tail, state_r, heartbeat_r, pool_epoch_r;
    assign daemon_state = state_r;
    assign daemon_heartbeat = heartbeat_r;

    wire [31:0] rx_used = rx_head - rx_tail;
    wire        rx_full = rx_used >= ENTRIES;
    wire [31:0] rx_room = ENTRIES - rx_used;
    assign sp_rx_room = rx_full ? 16'd0 : rx_room[15:0];
    assign sp_rx_taken = rx_tail[15:0];

    // ---------------- ring RAMs: one descriptor per word ----------------
    // Port A of each RAM is shared by AXI writes and reads (a read is accepted only in a cycle
    // without a write), port B belongs to the fast path: two ports per RAM, both mappable
    // onto true-dual-port block RAM with byte write enables.
    (* ram_style = "block" *) reg [DESC_BITS-1:0] rx_ram [0:ENTRIES-1];
    (* ram_style = "block" *) reg [DESC_BITS-1:0] tx_ram [0:ENTRIES-1];
    // Block RAM powers up with this content after configuration (the rings start zeroed).
    integer z;
    initial for (z = 0; z < ENTRIES; z = z + 1) begin rx_ram[z] = 0; tx_ram[z] = 0; end

    // ---------------- AXI4-Lite write ----------------
    wire wr_fire = s_axil_awvalid && s_axil_wvalid && !s_axil_bvalid;
    assign s_axil_awready = wr_fire;
    assign s_axil_wready  = wr_fire;
    assign s_axil_bresp   = 2'b00;

    wire [AXI_ADDR_WIDTH-1:0] wa = {s_axil_awaddr[AXI_ADDR_WIDTH-1:2], 2'b00};
    wire wa_rx = wa >= CLIO_RX_BASE && wa < CLIO_TX_BASE;
    wire wa_tx = wa >= CLIO_TX_BASE && wa < CLIO_WINDOW_BYTES;
    wire [AXI_ADDR_WIDTH-1:0] wa_off = wa - (wa_tx ? CLIO_TX_BASE : CLIO_RX_BASE);
    wire [SLOT_BITS-1:0] wa_slot = wa_off[DESC_SHIFT +: SLOT_BITS];
    wire [LANE_BITS-1:0] wa_lane = wa_off[2 +: LANE_BITS];
    wire [4*LANES-1:0]   wa_bytes = {{(4*LANES-4){1'b0}}, s_axil_wstrb} << (4 * wa_lane);
    wire [DESC_BITS-1:0] wa_data  = {LANES{s_axil_wdata}};

    // ---------------- AXI4-Lite read address ----------------
    reg                      rd_pending;
    reg [AXI_ADDR_WIDTH-1:0] ra;
    assign s_axil_arready = !rd_pending && !s_axil_rvalid && !wr_fire && !rst;
    assign s_axil_rresp   = 2'b00;
    wire ar_fire = s_axil_arvalid && s_axil_arready;
    wire [AXI_ADDR_WIDTH-1:0] ar_off = s_axil_araddr - (s_axil_araddr >= CLIO_TX_BASE ? CLIO_TX_BASE : CLIO_RX_BASE);
    wire [SLOT_BITS-1:0] pa_slot = wr_fire ? wa_slot : ar_off[DESC_SHIFT +: SLOT_BITS];

    // ---------------- port A: AXI ----------------
    reg [DESC_BITS-1:0] rx_rd_q, tx_rd_q;
    integer i, j;
    always @(posedge clk) begin
        for (i = 0; i < 4 * LANES; i = i + 1)
            if (wr_fire && wa_rx && wa_bytes[i]) rx_ram[pa_slot][8*i +: 8] <= wa_data[8*i +: 8];
        rx_rd_q <= rx_ram[pa_slot];
    end
    always @(posedge clk) begin
        for (j = 0; j < 4 * LANES; j = j + 1)
            if (wr_fire && wa_tx && wa_bytes[j]) tx_ram[pa_slot][8*j +: 8] <= wa_data[8*j +: 8];
        tx_rd_q <= tx_ram[pa_slot];
    end

    // ---------------- port B: the fast path ----------------
    assign sp_rx_ready = !rx_full && !rst;
    wire rx_fire = sp_rx_valid && sp_rx_ready;
    always @(posedge clk) begin
        if (rx_fire) rx_ram[rx_head[SLOT_BITS-1:0]] <= sp_rx_desc;
    end

    // TX: read the slot at the tail (read latency 1), present it, advance the tail when the
    // fast path takes it. One descriptor per two cycles at most; the slow path is far slower.
    reg                 tx_rd_pending;
    reg [DESC_BITS-1:0] tx_b_q;
    wire tx_issue = (tx_head != tx_tail) && !tx_rd_pending && !sp_tx_valid;
    wire tx_fire  = sp_tx_valid && sp_tx_ready;
    always @(posedge clk) begin
        tx_b_q <= tx_ram[tx_tail[SLOT_BITS-1:0]];
    end

    // ---------------- register state ----------------
    function [31:0] merge32(input [31:0] old, input [31:0] d, input [3:0] strb);
        integer k;
        begin
            for (k = 0; k < 4; k = k + 1)
                merge32[8*k +: 8] = strb[k] ? d[8*k +: 8] : old[8*k +: 8];
        end
    endfunction

    always @(posedge clk) begin
        if (rst) begin
            rx_head <= 0; rx_tail <= 0; tx_head <= 0; tx_tail <= 0;
            state_r <= 0; heartbeat_r <= 0; pool_epoch_r <= 0;
            tx_rd_pending <= 1'b0; sp_tx_valid <= 1'b0; sp_tx_desc <= 0;
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
                    CLIO_REG_POOL_EPOCH:       pool_epoch_r <= merge32(pool_epoch_r, s_axil_wdata, s_axil_wstrb);
                    default: ;
                endcase
            end
            // RX: the descriptor and the new head land at the same clock edge
            if (rx_fire) rx_head <= rx_head + 1;
            // TX
            if (tx_issue) tx_rd_pending <= 1'b1;
            if (tx_rd_pending) begin
                tx_rd_pending <= 1'b0;
                sp_tx_valid   <= 1'b1;
                sp_tx_desc    <= tx_b_q;
            end
            if (tx_fire) begin
                sp_tx_valid <= 1'b0;
                tx_tail     <= tx_tail + 1;
            end
        end
    end

    // ---------------- AXI4-Lite read data (latency 2) ----------------
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
                CLIO_REG_POOL_EPOCH:       reg_value = pool_epoch_r;
                default:                   reg_value = 32'd0;
            endcase
        end
    endfunction

    wire [LANE_BITS-1:0] ra_lane = ra[2 +: LANE_BITS];
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
                if (ra < CLIO_REGS_BYTES)        s_axil_rdata <= reg_value(ra);
                else if (ra < CLIO_TX_BASE)      s_axil_rdata <= rx_rd_q[32*ra_lane +: 32];
                else if (ra < CLIO_WINDOW_BYTES) s_axil_rdata <= tx_rd_q[32*ra_lane +: 32];
                else                             s_axil_rdata <= 32'd0;
            end
            if (s_axil_rvalid && s_axil_rready) s_axil_rvalid <= 1'b0;
        end
    end

endmodule

`default_nettype wire
