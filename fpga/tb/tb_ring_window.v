// Testbench of clio_ring_window (iverilog; driven by fpga/scripts/check_ring_layout.py).
//
//   +mode=init  reset, check every published register against clio_ring_regs.vh, push
//               descriptors in from the fast-path side and read them back over AXI (the ARM's
//               view), check ring-full back-pressure, sp_rx_room and the ARM-owned registers, then reset
//               again and dump the whole window, as the ARM would see it after reset, to
//               +image=FILE (one 32-bit little-endian word per line, hex).
//   +mode=tx    reset, write the TX ring and TX head of +image=FILE through AXI (what the
//               daemon wrote), collect every descriptor the window hands to the fast path
//               and write them to +txout=FILE (one descriptor per line, hex, byte 0 in the
//               low bits).
`timescale 1ns / 1ps
`default_nettype none

module tb_ring_window;
`include "clio_ring_regs.vh"
    localparam AW = 17;
    localparam ENTRIES = CLIO_DEFAULT_RING_ENTRIES;
    localparam DB = 8 * CLIO_DESC_BYTES;
    localparam WORDS32 = CLIO_WINDOW_BYTES / 4;

    reg clk = 0, rst = 1;
    always #2 clk = ~clk;

    reg  [AW-1:0] awaddr = 0, araddr = 0;
    reg           awvalid = 0, wvalid = 0, bready = 1, arvalid = 0, rready = 1;
    reg  [31:0]   wdata = 0;
    reg  [3:0]    wstrb = 4'hf;
    wire          awready, wready, bvalid, arready, rvalid;
    wire [1:0]    bresp, rresp;
    wire [31:0]   rdata;
    reg           rx_valid = 0, tx_ready = 0;
    reg  [DB-1:0] rx_desc = 0;
    wire          rx_ready, tx_valid;
    wire [DB-1:0] tx_desc;
    wire [15:0]   rx_free, rx_taken;
    wire [31:0]   dstate, dheart;

    localparam [63:0] DRAM = 64'd2147483648;
    clio_ring_window #(.DRAM_BYTES(DRAM), .PAGE_SHIFT(22), .FIFO_DEPTH(32), .AXI_ADDR_WIDTH(AW)) dut (
        .clk(clk), .rst(rst),
        .s_axil_awaddr(awaddr), .s_axil_awvalid(awvalid), .s_axil_awready(awready),
        .s_axil_wdata(wdata), .s_axil_wstrb(wstrb), .s_axil_wvalid(wvalid), .s_axil_wready(wready),
        .s_axil_bresp(bresp), .s_axil_bvalid(bvalid), .s_axil_bready(bready),
        .s_axil_araddr(araddr), .s_axil_arvalid(arvalid), .s_axil_arready(arready),
        .s_axil_rdata(rdata), .s_axil_rresp(rresp), .s_axil_rvalid(rvalid), .s_axil_rready(rready),
        .sp_rx_valid(rx_valid), .sp_rx_ready(rx_ready), .sp_rx_desc(rx_desc), .sp_rx_room(rx_free), .sp_rx_taken(rx_taken),
        .sp_tx_valid(tx_valid), .sp_tx_ready(tx_ready), .sp_tx_desc(tx_desc),
        .daemon_state(dstate), .daemon_heartbeat(dheart)
    );

    integer errors = 0;
    task fail(input [8*96-1:0] what); begin errors = errors + 1; $display("FAIL: %0s", what); end endtask

    task axi_write(input [AW-1:0] a, input [31:0] d, input [3:0] s);
        begin
            @(negedge clk); awaddr = a; wdata = d; wstrb = s; awvalid = 1; wvalid = 1;
            @(posedge clk); while (!(awready && wready)) @(posedge clk);
            @(negedge clk); awvalid = 0; wvalid = 0;
            while (!bvalid) @(negedge clk);
            if (bresp != 2'b00) fail("bresp");
        end
    endtask

    task axi_read(input [AW-1:0] a, output [31:0] d);
        begin
            @(negedge clk); araddr = a; arvalid = 1;
            @(posedge clk); while (!arready) @(posedge clk);
            @(negedge clk); arvalid = 0;
            while (!rvalid) @(negedge clk);
            d = rdata;
            if (rresp != 2'b00) fail("rresp");
        end
    endtask

    task expect_reg(input [AW-1:0] a, input [31:0] want);
        reg [31:0] got;
        begin
            axi_read(a, got);
            if (got !== want) begin
                errors = errors + 1;
                $display("FAIL: register 0x%0h reads 0x%0h, want 0x%0h", a, got, want);
            end
        end
    endtask

    task do_reset; begin rst = 1; repeat (4) @(posedge clk); @(negedge clk); rst = 0; end endtask

    // descriptor content used by the RX test: byte k of descriptor n
    function [DB-1:0] pattern(input integer n);
        integer k;
        begin
            for (k = 0; k < CLIO_DESC_BYTES; k = k + 1) pattern[8*k +: 8] = (n * 7 + k) & 8'hff;
        end
    endfunction

    task push_rx_desc(input integer n);
        begin
            @(negedge clk); rx_valid = 1; rx_desc = pattern(n);
            @(posedge clk); while (!rx_ready) @(posedge clk);
            @(negedge clk); rx_valid = 0;
        end
    endtask

    reg [8*256-1:0] mode, image, txout;
    reg [31:0] word, img [0:WORDS32-1];
    integer fd, n, b, k, w, cnt, head, guard;

    initial begin
        if (!$value$plusargs("mode=%s", mode)) mode = "init";
        if (!$value$plusargs("image=%s", image)) image = "window.hex";
        if (!$value$plusargs("txout=%s", txout)) txout = "tx.hex";
        do_reset;

        if (mode == "init") begin
            // 1. the register block as RingWindow::open reads it
            expect_reg(CLIO_REG_MAGIC, CLIO_RING_MAGIC);
            expect_reg(CLIO_REG_VERSION, CLIO_RING_VERSION);
            expect_reg(CLIO_REG_ENTRIES, ENTRIES);
            expect_reg(CLIO_REG_DESC_BYTES, CLIO_DESC_BYTES);
            expect_reg(CLIO_REG_DRAM_BYTES, DRAM[31:0]);
            expect_reg(CLIO_REG_DRAM_BYTES + 4, DRAM[63:32]);
            expect_reg(CLIO_REG_PAGE_SHIFT, 22);
            expect_reg(CLIO_REG_FIFO_DEPTH, 32);
            expect_reg(CLIO_REG_RX_HEAD, 0);
            expect_reg(CLIO_REG_TX_TAIL, 0);
            // 2. RX: three descriptors from the fast path, read back over AXI
            for (n = 0; n < 3; n = n + 1) push_rx_desc(n);
            expect_reg(CLIO_REG_RX_HEAD, 3);
            for (n = 0; n < 3; n = n + 1)
                for (k = 0; k < CLIO_DESC_BYTES / 4; k = k + 1)
                    expect_reg(CLIO_RX_BASE + n * CLIO_DESC_BYTES + 4 * k, pattern(n) >> (32 * k));
            if (rx_free !== ENTRIES - 3) fail("rx_free after 3 descriptors");
            // 3. ARM-owned registers: the fast-path-owned ones ignore AXI writes
            axi_write(CLIO_REG_RX_TAIL, 3, 4'hf);
            axi_write(CLIO_REG_RX_HEAD, 99, 4'hf);
            axi_write(CLIO_REG_MAGIC, 0, 4'hf);
            axi_write(CLIO_REG_DAEMON_STATE, 1, 4'hf);
            axi_write(CLIO_REG_DAEMON_HEARTBEAT, 32'h11223344, 4'h5);
            axi_write(CLIO_REG_POOL_EPOCH, 32'h0000BEEF, 4'hf);
            expect_reg(CLIO_REG_RX_TAIL, 3);
            expect_reg(CLIO_REG_RX_HEAD, 3);
            expect_reg(CLIO_REG_MAGIC, CLIO_RING_MAGIC);
            expect_reg(CLIO_REG_DAEMON_HEARTBEAT, 32'h00220044);
            expect_reg(CLIO_REG_POOL_EPOCH, 32'h0000BEEF);
            if (dstate !== 1) fail("daemon_state output");
            if (rx_free !== ENTRIES) fail("rx_free after the tail store");
            if (rx_taken !== 3) fail("sp_rx_taken is not the RX tail");
            // 4. full ring: ENTRIES descriptors fit, the next one waits
            for (n = 0; n < ENTRIES; n = n + 1) push_rx_desc(100 + n);
            @(negedge clk);
            if (rx_ready !== 1'b0 || rx_free !== 0) fail("full RX ring still accepts");
            axi_write(CLIO_REG_RX_TAIL, 4, 4'hf);
            @(negedge clk);
            if (rx_ready !== 1'b1 || rx_free !== 1) fail("RX ring does not accept after the tail store");
            if (rx_taken !== 4) fail("sp_rx_taken after the second tail store");
            // the wrapped descriptor landed in slot (3 + ENTRIES) mod ENTRIES
            expect_reg(CLIO_RX_BASE + ((3 + ENTRIES - 1) % ENTRIES) * CLIO_DESC_BYTES, pattern(100 + ENTRIES - 1));
            // 5. the window after reset, as the daemon maps it
            do_reset;
            fd = $fopen(image, "w");
            for (w = 0; w < WORDS32; w = w + 1) begin
                axi_read(4 * w, word);
                $fdisplay(fd, "%08h", word);
            end
            $fclose(fd);
        end else begin
            $readmemh(image, img);
            for (w = CLIO_TX_BASE / 4; w < CLIO_WINDOW_BYTES / 4; w = w + 1) axi_write(4 * w, img[w], 4'hf);
            head = img[CLIO_REG_TX_HEAD / 4];
            axi_write(CLIO_REG_TX_HEAD, head, 4'hf);
            fd = $fopen(txout, "w");
            cnt = 0; guard = 0;
            while (cnt < head && guard < 100000) begin
                @(negedge clk); tx_ready = guard % 3 != 1;     // some back-pressure
                @(posedge clk); guard = guard + 1;
                if (tx_valid && tx_ready) begin
                    $fdisplay(fd, "%0256h", tx_desc);
                    cnt = cnt + 1;
                end
            end
            $fclose(fd);
            @(negedge clk); tx_ready = 1;
            repeat (8) @(posedge clk);
            if (tx_valid) fail("the window hands out more descriptors than TX head says");
            expect_reg(CLIO_REG_TX_TAIL, head);
            $display("tx: %0d descriptors streamed", head);
        end
        if (errors == 0) $display("PASS tb_ring_window mode=%0s", mode);
        else $display("FAILED tb_ring_window: %0d errors", errors);
        $finish;
    end
endmodule
`default_nettype wire
